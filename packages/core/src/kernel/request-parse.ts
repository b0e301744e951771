import type { z } from 'zod';
import { InputError } from '../errors.js';

/**
 * The fields a zod error names, as `details.fields` of a 400 (CONTRACT.md):
 * dotted paths, `(body)` for the body itself. An unknown field is named by
 * its own path (`{ path: "scopes", message: "Unknown field." }`), one entry
 * per field, rather than by the object that holds it. The one mapping from
 * zod issues to the API's field errors, used by the kernel, settings and the
 * MCP tools.
 * @param prefix path segments of the parsed value inside the body (e.g. `['value']`).
 */
export function fieldIssues(error: z.ZodError, prefix: readonly string[] = []): Array<{ path: string; message: string }> {
  const pathOf = (segments: readonly PropertyKey[]) => [...prefix, ...segments.map(String)].join('.') || '(body)';
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: pathOf([...issue.path, key]), message: 'Unknown field.' }))
      : [{ path: pathOf(issue.path), message: issue.message }],
  );
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
