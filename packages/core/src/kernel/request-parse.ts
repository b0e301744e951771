import type { z } from 'zod';
import { InputError } from '../errors.js';

/**
 * The fields a zod error names, as `details.fields` of a 400 (CONTRACT.md):
 * dotted paths, `(body)` for the body itself. The one mapping from zod issues
 * to the API's field errors, used by the kernel, settings and the MCP tools.
 * @param prefix path segments of the parsed value inside the body (e.g. `['value']`).
 */
export function fieldIssues(error: z.ZodError, prefix: readonly string[] = []): Array<{ path: string; message: string }> {
  return error.issues.map((issue) => ({ path: [...prefix, ...issue.path.map(String)].join('.') || '(body)', message: issue.message }));
}

/**
 * Parses a request body with its route's schema: the one place a zod error
 * becomes the 400 `invalid_request` of the API. The kernel calls it once per
 * request; services receive `z.output<>` of the schema and never parse again.
 * @returns the parsed value (defaults applied, transforms run).
 * @throws InputError with `details.fields` = `[{ path, message }]`.
 */
export function parseRequest<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new InputError('The request body does not match the schema.', { fields: fieldIssues(parsed.error) });
}
