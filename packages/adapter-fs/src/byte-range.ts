import parseRange from 'range-parser';

/** What to serve for a GET with an optional `Range` header (RFC 9110 §14). */
export type RangeDecision = { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * Decides how to answer a `Range` header on an object of `size` bytes. One
 * byte range is served as 206; several ranges, a malformed header, or an
 * `If-Range` precondition (not evaluated here) fall back to the full object
 * (200), as RFC 9110 allows; a range starting past the end is 416.
 */
export function decideRange(size: number, range: string | null, ifRange: string | null): RangeDecision {
  if (range === null || ifRange !== null) return { kind: 'full' };
  const parsed = parseRange(size, range, { combine: true });
  if (parsed === -1) return { kind: 'unsatisfiable' };
  if (parsed === -2 || parsed.type !== 'bytes' || parsed.length !== 1) return { kind: 'full' };
  const [only] = parsed;
  if (!only) return { kind: 'full' };
  return { kind: 'partial', start: only.start, end: only.end };
}
