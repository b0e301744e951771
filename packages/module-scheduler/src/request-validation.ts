import { InputError } from '@agentinfra/core';
import type { z } from 'zod';

/**
 * Validates a service input with its request schema, so library callers get
 * the same checks as HTTP callers.
 * @returns the parsed value (defaults applied).
 * @throws InputError (400 `invalid_request`) with `details.fields` = `[{ path, message }]`, like the kernel.
 */
export function parseRequest<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.') || '(body)', message: issue.message }));
  throw new InputError('The request body does not match the schema.', { fields });
}
