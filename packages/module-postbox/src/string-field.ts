import { z } from 'zod';

/** Whether a check should run: only on strings (see {@link stringField}). */
const onStrings = (payload: z.core.ParsePayload) => typeof payload.value === 'string';

/**
 * A string of at most `max` (and at least `min`) characters whose length
 * checks run on strings only. Zod 4 runs length checks on any value that has
 * a `length`, even after the type check failed, so `z.string().min(3)` given
 * `["x@example.com"]` adds "expected array to have >=3 items" to "expected
 * string, received array"; here a wrong type reports only that, and a short
 * or long string gets zod's usual message. The JSON Schema keeps
 * `minLength`/`maxLength`.
 */
export function stringField(bounds: { min?: number; max: number }) {
  const min =
    bounds.min === undefined ? [] : [new z.core.$ZodCheckMinLength({ check: 'min_length', minimum: bounds.min, when: onStrings })];
  return z.string().check(...min, new z.core.$ZodCheckMaxLength({ check: 'max_length', maximum: bounds.max, when: onStrings }));
}
