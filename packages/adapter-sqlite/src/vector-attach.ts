import type { VectorAttach, VectorHit } from '@agentinfra/core';
import { attachedRow, attachSql } from '@agentinfra/core';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * Sets `row` on each of `hits` to its row of `attach`'s table (the columns
 * `attach.columns`, by name), read by one statement over exactly these hits'
 * ids; hits whose attached row does not exist keep no `row`. Reading the
 * attached columns only for the final hits, rather than in the neighbour
 * search, bounds the attached data to `hits.length` rows even when ties make
 * the search read many more neighbours (#11: 100 memories of 32 KB each read
 * per tie-widening step).
 * @returns `hits`, the same array.
 * @throws RangeError for identifiers that are not plain; the driver's error when SQLite fails.
 */
export function attachRows(db: BetterSqlite3.Database, hits: VectorHit[], attach: VectorAttach): VectorHit[] {
  if (hits.length === 0) return hits;
  const { select, join } = attachSql(attach, 'wanted.value');
  const rows = db
    .prepare(`select wanted.value as id, ${select.join(', ')} from json_each(?) wanted ${join}`)
    .all(JSON.stringify(hits.map((hit) => hit.id))) as Array<{ id: string } & Record<string, unknown>>;
  const byId = new Map(rows.map((row) => [row.id, attachedRow(row)]));
  for (const hit of hits) {
    const row = byId.get(hit.id);
    if (row !== undefined) hit.row = row;
  }
  return hits;
}
