import type { Knex } from 'knex';

/** A sort column and the value the last listed row has in it. */
export type KeysetColumn = readonly [column: string, value: string | number];

/**
 * Restricts `query` to the rows after a keyset position, for a list ordered
 * by two columns in the same direction (`desc`: newest first; `asc`): with
 * `first = [a, x]` and `second = [b, y]`, the rows where `a < x`, or `a = x`
 * and `b < y` (`>` for `asc`). `second` must tell apart the rows that share
 * `first` (an id), so a page never repeats or skips one. The caller orders
 * the query by the same two columns, the same way. Values are bound, never
 * spliced into SQL.
 * @returns `query`, for chaining.
 */
export function whereAfterKeyset<Q extends Knex.QueryBuilder>(
  query: Q,
  order: 'asc' | 'desc',
  first: KeysetColumn,
  second: KeysetColumn,
): Q {
  const past = order === 'desc' ? '<' : '>';
  return query.where((where) =>
    where.where(first[0], past, first[1]).orWhere((same) => same.where(first[0], first[1]).andWhere(second[0], past, second[1])),
  ) as Q;
}

/**
 * One page of a keyset list whose query read `limit + 1` rows: the first
 * `limit` of them, and `next_cursor`, the cursor after the last of those
 * (`cursorAfter(last)`) when a row beyond them was read, else `null` (the
 * last page).
 */
export function keysetPage<R>(
  rows: readonly R[],
  limit: number,
  cursorAfter: (last: R) => string,
): { page: R[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, next_cursor: rows.length > limit && last !== undefined ? cursorAfter(last) : null };
}
