import type { VectorHit, VectorIndex, VectorItem } from '@agentinfra/core';
import { filterVisibilityKeys, itemVisibilityKeys, toUnitVector } from '@agentinfra/core';
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';
import * as sqliteVec from 'sqlite-vec';
import { z } from 'zod';
import { vectorBlob } from './vector-blob.js';
import { createSqliteVectorTables, type SqliteVectorTables, sqliteVectorTables } from './vector-tables.js';

/** sqlite-vec refuses KNN queries asking for more neighbours than this. */
const VEC0_MAX_K = 4096;
/** Largest number of dimensions a sqlite-vec `float[N]` column takes. */
const VEC0_MAX_DIMENSIONS = 8192;
/** Items per multi-row INSERT (three bound parameters each, far below SQLite's limit). */
const INSERT_BATCH = 250;

/** Options of {@link createSqliteVectorIndex}. */
export const sqliteVectorIndexOptions = z.object({
  /** A knex on better-sqlite3 whose connections ran {@link loadSqliteVectorExtension}. */
  knex: z.custom<Knex>(
    (value) => typeof value === 'function' && typeof (value as { raw?: unknown }).raw === 'function',
    'knex must be a Knex instance',
  ),
  /** Name prefix of the index's tables, e.g. `memory_vectors`. */
  table: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,47}$/, 'table must be a plain identifier of at most 48 characters'),
});
export type SqliteVectorIndexOptions = z.input<typeof sqliteVectorIndexOptions>;

const ensureOptions = z.object({ dimensions: z.number().int().min(1).max(VEC0_MAX_DIMENSIONS) });

/**
 * Loads the sqlite-vec extension (vec0 virtual tables, `vec_distance_l2`)
 * into one better-sqlite3 connection. Call it for every connection, e.g. in
 * knex's `pool.afterCreate`.
 * @throws the loader's error when the platform's sqlite-vec binary is missing.
 */
export function loadSqliteVectorExtension(connection: BetterSqlite3.Database): void {
  sqliteVec.load(connection);
}

/** A neighbour as sqlite-vec reports it: L2 distance between unit vectors, in [0, 2]. */
interface Neighbour {
  id: string;
  distance: number;
}

/** An item ready to write: unit vector bytes and visibility keys. */
interface PreparedItem {
  id: string;
  agentId: string;
  keys: string[];
  blob: Buffer;
}

/**
 * Exact cosine {@link VectorIndex} in the SQLite file, on sqlite-vec's `vec0`
 * brute-force KNN (no state in process memory, so several processes may
 * share the file).
 *
 * Layout ({@link SqliteVectorTables}): vectors are stored normalised in a
 * `vec0` table with L2 distance (cosine = 1 − d²/2 for unit vectors, and L2
 * is sqlite-vec's fastest kernel). Each item points at the set of its
 * visibility keys (`self:<agent>`, `team:<name>`); a query turns its filter
 * into set ids through the `(scope_key, set_id)` index, and `vec0` keeps only
 * rows of those sets (its `set_id` metadata column) during one scan of the
 * vectors, whatever the filter's selectivity.
 *
 * Results: exactly `min(k, matches)` hits, score = cosine similarity, best
 * first, equal scores by ascending id (the query asks for one neighbour more
 * than `k` and widens while the tie at the k-th place continues). Measured
 * on 2 cores (bench/vector-sqlite.ts): about 10 ms for k = 10 over 100 000
 * vectors of 100 dimensions, growing with k (about 20 ms for k = 100). `k`
 * above 4095 (sqlite-vec's KNN limit) uses an ordered scan (about 0.3 s there).
 *
 * @throws ZodError when options are invalid. Methods throw RangeError for
 *   vectors of the wrong dimension, zero vectors or a bad `k`, and an Error
 *   with the driver error as `cause` when SQLite fails.
 */
export function createSqliteVectorIndex(options: SqliteVectorIndexOptions): VectorIndex {
  const { knex, table } = sqliteVectorIndexOptions.parse(options);
  const tables = sqliteVectorTables(table);
  let dimensions: number | undefined;

  /** Runs `work`, wrapping any failure that is not a caller mistake with the index name and operation. */
  async function attempt<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof RangeError) throw error;
      throw new Error(`sqlite vector index ${table}: ${operation} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  /** The dimensions the stored index holds (read once; they never change). */
  async function heldDimensions(): Promise<number> {
    if (dimensions !== undefined) return dimensions;
    const found = (await knex.raw(`select 1 from sqlite_master where type = 'table' and name = ?`, [`${table}_meta`])) as unknown[];
    if (found.length === 0) throw new Error(`the index does not exist yet; call ensure() first`);
    const [row] = (await knex.raw(`select value from ${tables.meta} where key = 'dimensions'`)) as Array<{
      value: string;
    }>;
    dimensions = Number(row?.value);
    return dimensions;
  }

  async function nearest(blob: Buffer, keys: string[], fetch: number): Promise<Neighbour[]> {
    return (await knex.raw(
      `with knn as materialized (
         select rowid, distance from ${tables.vectors}
         where embedding match ? and k = ?
           and set_id in (select set_id from ${tables.scopeKeys} where scope_key in (select value from json_each(?)))
       )
       select i.id as id, knn.distance as distance from knn join ${tables.items} i on i.rid = knn.rowid`,
      [blob, fetch, JSON.stringify(keys)],
    )) as Neighbour[];
  }

  /** Ordered scan for `k` beyond sqlite-vec's KNN limit: exact and tie-ordered in SQL, but reads every row. */
  async function scan(blob: Buffer, keys: string[], k: number): Promise<Neighbour[]> {
    return (await knex.raw(
      `select i.id as id, vec_distance_l2(v.embedding, ?) as distance
       from ${tables.vectors} v join ${tables.items} i on i.rid = v.rowid
       where v.set_id in (select set_id from ${tables.scopeKeys} where scope_key in (select value from json_each(?)))
       order by distance, i.id limit ?`,
      [blob, JSON.stringify(keys), k],
    )) as Neighbour[];
  }

  async function writeItems(trx: Knex.Transaction, batch: readonly PreparedItem[]): Promise<void> {
    const setIds = await resolveScopeSets(trx, tables, batch);
    const setOf = (item: PreparedItem) => setIds.get(JSON.stringify(item.keys)) as number;
    const existing = new Map(
      (
        (await trx.raw(`select rid, id, set_id from ${tables.items} where id in (select value from json_each(?))`, [
          JSON.stringify(batch.map((item) => item.id)),
        ])) as Array<{ rid: number; id: string; set_id: number }>
      ).map((row) => [row.id, row]),
    );
    const abandonedSets = new Set<number>();
    const fresh: PreparedItem[] = [];
    for (const item of batch) {
      const row = existing.get(item.id);
      if (row === undefined) {
        fresh.push(item);
        continue;
      }
      const setId = setOf(item);
      if (row.set_id !== setId) abandonedSets.add(row.set_id);
      await trx.raw(`update ${tables.items} set agent_id = ?, set_id = ? where rid = ?`, [item.agentId, setId, row.rid]);
      await trx.raw(`update ${tables.vectors} set embedding = ?, set_id = cast(? as integer) where rowid = cast(? as integer)`, [
        item.blob,
        setId,
        row.rid,
      ]);
    }
    if (fresh.length > 0) {
      const inserted = (await trx.raw(
        `insert into ${tables.items} (id, agent_id, set_id) values ${fresh.map(() => '(?, ?, ?)').join(', ')}
         returning rid, id`,
        fresh.flatMap((item) => [item.id, item.agentId, setOf(item)]),
      )) as Array<{ rid: number; id: string }>;
      const ridOf = new Map(inserted.map((row) => [row.id, row.rid]));
      await trx.raw(
        `insert into ${tables.vectors} (rowid, embedding, set_id)
         values ${fresh.map(() => '(cast(? as integer), ?, cast(? as integer))').join(', ')}`,
        fresh.flatMap((item) => [ridOf.get(item.id) as number, item.blob, setOf(item)]),
      );
    }
    await dropUnusedScopeSets(trx, tables, abandonedSets);
  }

  return {
    async ensure(request) {
      const { dimensions: wanted } = ensureOptions.parse(request);
      const held = await attempt('ensure', async () => {
        await knex.raw('select vec_version()').catch((error: unknown) => {
          throw new Error('sqlite-vec is not loaded on this connection (call loadSqliteVectorExtension per connection)', {
            cause: error,
          });
        });
        return knex.transaction((trx) => createSqliteVectorTables(trx, tables, wanted));
      });
      if (held !== wanted) {
        throw new RangeError(`sqlite vector index ${table} holds ${held}-dimensional vectors, not ${wanted}`);
      }
      dimensions = held;
    },

    async upsert({ items }) {
      if (items.length === 0) return;
      await attempt('upsert', async () => {
        const held = await heldDimensions();
        const latest = new Map<string, VectorItem>();
        for (const item of items) latest.set(item.id, item);
        const prepared = [...latest.values()].map((item) => ({
          id: item.id,
          agentId: item.agentId,
          keys: itemVisibilityKeys(item),
          blob: vectorBlob(toUnitVector(item.vector, held, `vector of item ${item.id}`)),
        }));
        await knex.transaction(async (trx) => {
          for (let start = 0; start < prepared.length; start += INSERT_BATCH) {
            await writeItems(trx, prepared.slice(start, start + INSERT_BATCH));
          }
        });
      });
    },

    async remove({ ids }) {
      if (ids.length === 0) return 0;
      return attempt('remove', async () => {
        await heldDimensions();
        return knex.transaction(async (trx) => {
          const deleted = (await trx.raw(`delete from ${tables.items} where id in (select value from json_each(?)) returning rid, set_id`, [
            JSON.stringify([...new Set(ids)]),
          ])) as Array<{ rid: number; set_id: number }>;
          for (const row of deleted) {
            await trx.raw(`delete from ${tables.vectors} where rowid = cast(? as integer)`, [row.rid]);
          }
          await dropUnusedScopeSets(trx, tables, new Set(deleted.map((row) => row.set_id)));
          return deleted.length;
        });
      });
    },

    async query({ vector, k, filter }) {
      if (!Number.isInteger(k) || k < 0) throw new RangeError(`k must be a non-negative integer, got ${k}`);
      return attempt('query', async () => {
        const blob = vectorBlob(toUnitVector(vector, await heldDimensions(), 'query vector'));
        const keys = filterVisibilityKeys(filter);
        if (k === 0 || keys.length === 0) return [];
        let fetch = k + 1;
        while (fetch <= VEC0_MAX_K) {
          const hits = ranked(await nearest(blob, keys, fetch));
          const tieContinues = hits.length === fetch && hits[fetch - 1]?.score === hits[k - 1]?.score;
          if (!tieContinues) return hits.slice(0, k);
          if (fetch === VEC0_MAX_K) break;
          fetch = Math.min(fetch * 4, VEC0_MAX_K);
        }
        return ranked(await scan(blob, keys, k));
      });
    },

    async count() {
      return attempt('count', async () => {
        await heldDimensions();
        const [row] = (await knex.raw(`select count(*) as n from ${tables.items}`)) as Array<{ n: number }>;
        return Number(row?.n ?? 0);
      });
    },
  };
}

/**
 * Hits from sqlite-vec neighbours: score = 1 − d²/2 (cosine similarity of unit
 * vectors at L2 distance d, clamped to [−1, 1]), best first, equal scores by id.
 */
function ranked(neighbours: readonly Neighbour[]): VectorHit[] {
  return neighbours
    .map(({ id, distance }) => ({ id, score: Math.min(1, Math.max(-1, 1 - (distance * distance) / 2)) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The set id of each distinct key list in `items`, keyed by its JSON
 * signature; sets seen for the first time are created with their keys.
 */
async function resolveScopeSets(
  trx: Knex.Transaction,
  tables: SqliteVectorTables,
  items: readonly PreparedItem[],
): Promise<Map<string, number>> {
  const keysOf = new Map(items.map((item) => [JSON.stringify(item.keys), item.keys]));
  const signatures = [...keysOf.keys()];
  const known = (await trx.raw(`select set_id, signature from ${tables.scopeSets} where signature in (select value from json_each(?))`, [
    JSON.stringify(signatures),
  ])) as Array<{ set_id: number; signature: string }>;
  const setIds = new Map(known.map((row) => [row.signature, row.set_id]));
  const missing = signatures.filter((signature) => !setIds.has(signature));
  if (missing.length === 0) return setIds;
  const created = (await trx.raw(`insert into ${tables.scopeSets} (signature) select value from json_each(?) returning set_id, signature`, [
    JSON.stringify(missing),
  ])) as Array<{ set_id: number; signature: string }>;
  const pairs: Array<[string, number]> = [];
  for (const row of created) {
    setIds.set(row.signature, row.set_id);
    for (const key of keysOf.get(row.signature) ?? []) pairs.push([key, row.set_id]);
  }
  if (pairs.length > 0) {
    await trx.raw(
      `insert into ${tables.scopeKeys} (scope_key, set_id)
       select value ->> 0, value ->> 1 from json_each(?)`,
      [JSON.stringify(pairs)],
    );
  }
  return setIds;
}

/** Deletes those of `setIds` that no item points at any more, with their keys. */
async function dropUnusedScopeSets(trx: Knex.Transaction, tables: SqliteVectorTables, setIds: ReadonlySet<number>) {
  if (setIds.size === 0) return;
  const unused = (await trx.raw(
    `select value as set_id from json_each(?)
     where not exists (select 1 from ${tables.items} i where i.set_id = value)`,
    [JSON.stringify([...setIds])],
  )) as Array<{ set_id: number }>;
  if (unused.length === 0) return;
  const list = JSON.stringify(unused.map((row) => row.set_id));
  await trx.raw(`delete from ${tables.scopeKeys} where set_id in (select value from json_each(?))`, [list]);
  await trx.raw(`delete from ${tables.scopeSets} where set_id in (select value from json_each(?))`, [list]);
}
