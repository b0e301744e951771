import type { z } from 'zod';
import { InputError } from '../errors.js';

/**
 * Field errors one error lists at most: a 900 KB body of 85,000 unknown keys
 * was answered with all of them, 3.8 MB of `details.fields`. The first ones
 * say what is wrong; the error's message gives the total.
 */
export const MAX_FIELD_ISSUES = 20;

/**
 * The fields a zod error names, as `details.fields` of a 400 (CONTRACT.md):
 * dotted paths, `(body)` for the body itself. An unknown field is named by
 * its own path (`{ path: "scopes", message: "Unknown field." }`), one entry
 * per field, rather than by the object that holds it. The first
 * {@link MAX_FIELD_ISSUES} only ({@link fieldIssueCount} counts them all).
 * The one mapping from zod issues to the API's field errors, used by the
 * kernel, settings and the MCP tools.
 * @param prefix path segments of the parsed value inside the body (e.g. `['value']`).
 */
export function fieldIssues(error: z.ZodError, prefix: readonly string[] = []): Array<{ path: string; message: string }> {
  const pathOf = (segments: readonly PropertyKey[]) => [...prefix, ...segments.map(String)].join('.') || '(body)';
  const listed: Array<{ path: string; message: string }> = [];
  for (const issue of error.issues) {
    if (issue.code !== 'unrecognized_keys') listed.push({ path: pathOf(issue.path), message: issue.message });
    else {
      for (const key of issue.keys.slice(0, MAX_FIELD_ISSUES - listed.length)) {
        listed.push({ path: pathOf([...issue.path, key]), message: 'Unknown field.' });
      }
    }
    if (listed.length >= MAX_FIELD_ISSUES) return listed.slice(0, MAX_FIELD_ISSUES);
  }
  return listed;
}

/** How many field errors {@link fieldIssues} would name without its limit. */
function fieldIssueCount(error: z.ZodError): number {
  return error.issues.reduce((count, issue) => count + (issue.code === 'unrecognized_keys' ? issue.keys.length : 1), 0);
}

/** ` (the first 20 of 85000 problems are listed)` when {@link fieldIssues} left some out, else the empty string; for a 400's message. */
export function unlistedIssuesNote(error: z.ZodError): string {
  const count = fieldIssueCount(error);
  return count > MAX_FIELD_ISSUES ? ` (the first ${MAX_FIELD_ISSUES} of ${count} problems are listed)` : '';
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
  throw new InputError(`The request body does not match the schema${unlistedIssuesNote(parsed.error)}.`, {
    fields: fieldIssues(parsed.error),
  });
}
