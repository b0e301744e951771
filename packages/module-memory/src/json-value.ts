import { z } from 'zod';

/** A JSON value (RFC 8259): what `z.json()` accepts. */
export type JsonValue = z.infer<ReturnType<typeof z.json>>;

/**
 * Whether `value` is a JSON value: `null`, a boolean, a finite number, a
 * string, an array of JSON values or a plain object of JSON values. One
 * iterative pass over the value, so its cost is a few nanoseconds per element
 * and nesting cannot overflow the stack (issue #11: `z.json()` tries each
 * branch of its union on every element, about 0.8 µs each, so a 400 KB array
 * of numbers held the event loop for 160 ms).
 */
export function isJsonValue(value: unknown): value is JsonValue {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (item === null || typeof item === 'string' || typeof item === 'boolean') continue;
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) return false;
      continue;
    }
    if (Array.isArray(item)) {
      for (const element of item) pending.push(element);
      continue;
    }
    if (typeof item !== 'object') return false;
    const prototype = Object.getPrototypeOf(item);
    if (prototype !== Object.prototype && prototype !== null) return false;
    for (const key in item) {
      if (Object.hasOwn(item, key)) pending.push((item as Record<string, unknown>)[key]);
    }
  }
  return true;
}

/** Zod schema of any JSON value, checked with {@link isJsonValue} (a JSON Schema of `{}`: any value). */
export const jsonValueSchema = z.custom<JsonValue>(isJsonValue, 'must be a JSON value');
