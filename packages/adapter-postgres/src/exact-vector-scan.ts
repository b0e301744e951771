import type { VectorHit } from '@agentinfra/core';
import type { Knex } from 'knex';
import { vectorFromBytes } from './vector-encoding.js';

/** Rows fetched per round trip by {@link scanByteaVectors}. */
const SCAN_BATCH = 2_000;

/** Orders hits best first, equal scores by ascending id (UTF-16 code units, which is byte order for most text). */
export function compareHits(a: VectorHit, b: VectorHit): number {
  return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Exact top-`k` over an index stored as `bytea` (float32 unit vectors): reads
 * the rows whose `scope_keys` meet `keys` in primary-key order, `SCAN_BATCH`
 * at a time (keyset pagination, so memory stays bounded), and scores each by
 * its dot product with the unit vector `query`, which is the cosine similarity.
 * @returns at most `k` hits, best first, equal scores by id.
 */
export async function scanByteaVectors(options: {
  knex: Knex;
  items: string;
  keys: readonly string[];
  query: Float32Array;
  k: number;
}): Promise<VectorHit[]> {
  const { knex, items, keys, query, k } = options;
  let best: VectorHit[] = [];
  let after: string | undefined;
  for (;;) {
    const { rows } = (await knex.raw(
      `select id, embedding from ${items}
       where scope_keys && ?::text[] ${after === undefined ? '' : 'and id > ?'}
       order by id limit ?`,
      after === undefined ? [[...keys], SCAN_BATCH] : [[...keys], after, SCAN_BATCH],
    )) as { rows: Array<{ id: string; embedding: Buffer }> };
    for (const row of rows) {
      const vector = vectorFromBytes(row.embedding);
      let score = 0;
      for (let i = 0; i < query.length; i++) score += (vector[i] ?? 0) * (query[i] ?? 0);
      best.push({ id: row.id, score: Math.min(1, Math.max(-1, score)) });
    }
    if (best.length > k) best = best.sort(compareHits).slice(0, k);
    if (rows.length < SCAN_BATCH) break;
    after = rows[rows.length - 1]?.id;
  }
  return best.sort(compareHits);
}
