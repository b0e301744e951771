/** Values bound per SQL statement in an `IN (…)` list: well under SQLite's (32,766) and PostgreSQL's (65,535) parameter limits. */
export const SQL_ID_CHUNK = 500;

/** `items` in slices of at most `size` (for example {@link SQL_ID_CHUNK} ids per statement). */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}
