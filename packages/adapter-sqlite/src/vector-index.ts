import type { SqlValue, VectorAttach, VectorHit, VectorIndex, VectorItem } from '@agentinfra/core';
import {
  attachedRow,
  attachSql,
  filterVisibilityKeys,
  insertShape,
  itemVisibilityKeys,
  knexOptionSchema,
  toUnitVector,
} from '@agentinfra/core';
import type BetterSqlite3 from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { z } from 'zod';
import { withConnection } from './connection-lease.js';
import { revealFullDatabase } from './storage-full.js';
import { attachRows } from './vector-attach.js';
import { vectorBlob } from './vector-blob.js';
import { createSqliteVectorTables, sqliteVectorTables } from './vector-tables.js';
import { bestHits } from './vector-ties.js';
import { insertRows, type PreparedRows, removeItems, writeItems } from './vector-writes.js';

/** Largest number of dimensions a sqlite-vec `float[N]` column takes. */
const VEC0_MAX_DIMENSIONS = 8192;

/** Options of {@link createSqliteVectorIndex}. */
export const sqliteVectorIndexOptions = z.object({
  /** A knex on better-sqlite3 whose connections ran {@link loadSqliteVectorExtension}. */
  knex: knexOptionSchema,
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

/** A neighbour as sqlite-vec reports it: L2 distance between unit vectors, in [0, 2], and any attached columns. */
type Neighbour = { id: string; distance: number } & Record<string, unknown>;

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
 * than `k`, and four times as many when the k-th place ties: {@link bestHits};
 * a tie wider than that pass fills the tied places with the lowest ids among
 * the tied items it returned, repeatably, rather than scanning every vector
 * for the lowest ids of all). Measured
 * on 2 cores (bench/vector-sqlite.ts): about 10 ms for k = 10 over 100 000
 * vectors of 100 dimensions, growing with k (about 20 ms for k = 100). `k`
 * above 4095 (sqlite-vec's KNN limit) uses an ordered scan (about 0.3 s there).
 *
 * Upserts, removals and queries run their statements synchronously on the
 * pool's connection ({@link withConnection}); an upsert or removal is one
 * transaction, and `upsert` with `insert` stores those rows in it. `query`
 * with `attach` reads the attached columns in the statement of its first
 * pass (`k + 1` rows), which decides unless the k-th place ties; after a
 * tie, it reads them for the final hits only ({@link attachRows}) right
 * after the deciding pass, in the same synchronous step (so no statement of
 * this process runs in between).
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
  function heldDimensions(db: BetterSqlite3.Database): number {
    if (dimensions !== undefined) return dimensions;
    const found = db.prepare(`select 1 from sqlite_master where type = 'table' and name = ?`).get(`${table}_meta`);
    if (found === undefined) throw new Error(`the index does not exist yet; call ensure() first`);
    const row = db.prepare(`select value from ${tables.meta} where key = 'dimensions'`).get() as { value: string } | undefined;
    dimensions = Number(row?.value);
    return dimensions;
  }

  /** The `fetch` nearest neighbours among items with one of `keys`, unordered, with the columns of `attach` when given. */
  function nearest(db: BetterSqlite3.Database, blob: Buffer, keys: string[], fetch: number, attach?: VectorAttach): Neighbour[] {
    const attached = attach === undefined ? undefined : attachSql(attach, 'i.id');
    return db
      .prepare(
        `with knn as materialized (
           select rowid, distance from ${tables.vectors}
           where embedding match ? and k = ?
             and set_id in (select set_id from ${tables.scopeKeys} where scope_key in (select value from json_each(?)))
         )
         select i.id as id, knn.distance as distance${attached === undefined ? '' : `, ${attached.select.join(', ')}`}
         from knn join ${tables.items} i on i.rid = knn.rowid ${attached?.join ?? ''}`,
      )
      .all(blob, fetch, JSON.stringify(keys)) as Neighbour[];
  }

  /** Ordered scan for `k` beyond sqlite-vec's KNN limit: exact and tie-ordered in SQL, but reads every row. */
  function scan(db: BetterSqlite3.Database, blob: Buffer, keys: string[], k: number): Neighbour[] {
    return db
      .prepare(
        `select i.id as id, vec_distance_l2(v.embedding, ?) as distance
         from ${tables.vectors} v join ${tables.items} i on i.rid = v.rowid
         where v.set_id in (select set_id from ${tables.scopeKeys} where scope_key in (select value from json_each(?)))
         order by distance, i.id limit ?`,
      )
      .all(blob, JSON.stringify(keys), k) as Neighbour[];
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

    async upsert({ items, insert }) {
      const shape = insertShape(insert);
      if (items.length === 0 && shape === null) return;
      const rows: PreparedRows | null =
        shape === null ? null : { ...shape, values: (insert?.rows ?? []).map((row) => shape.names.map((name) => row[name] as SqlValue)) };
      await attempt('upsert', () =>
        withConnection(knex, (db) => {
          const held = heldDimensions(db);
          const latest = new Map<string, VectorItem>();
          for (const item of items) latest.set(item.id, item);
          const prepared = [...latest.values()].map((item) => ({
            id: item.id,
            agentId: item.agentId,
            keys: itemVisibilityKeys(item),
            blob: vectorBlob(toUnitVector(item.vector, held, `vector of item ${item.id}`)),
          }));
          try {
            db.transaction(() => {
              if (prepared.length > 0) writeItems(db, tables, prepared);
              if (rows !== null) insertRows(db, rows);
            }).immediate();
          } catch (error) {
            throw revealFullDatabase(db, error);
          }
        }),
      );
    },

    async remove({ ids }) {
      if (ids.length === 0) return 0;
      return attempt('remove', () =>
        withConnection(knex, (db) => {
          heldDimensions(db);
          return db.transaction(() => removeItems(db, tables, ids)).immediate();
        }),
      );
    },

    async query({ vector, k, filter, attach }) {
      if (!Number.isInteger(k) || k < 0) throw new RangeError(`k must be a non-negative integer, got ${k}`);
      if (attach !== undefined) attachSql(attach, 'i.id');
      return attempt('query', () =>
        withConnection(knex, (db) => {
          const blob = vectorBlob(toUnitVector(vector, heldDimensions(db), 'query vector'));
          const keys = filterVisibilityKeys(filter);
          if (k === 0 || keys.length === 0) return [];
          // The first pass (k + 1 neighbours) usually decides: it reads the attached rows in the same statement.
          // The wider pass after a tie, or the scan for k beyond sqlite-vec's limit, is followed by one read of the final hits' rows.
          let rowsAttached = false;
          const hits = bestHits(
            k,
            (fetch) => {
              const withRows = attach !== undefined && fetch === k + 1;
              rowsAttached = withRows;
              return ranked(nearest(db, blob, keys, fetch, withRows ? attach : undefined));
            },
            () => {
              rowsAttached = false;
              return ranked(scan(db, blob, keys, k));
            },
          );
          return attach === undefined || rowsAttached ? hits : attachRows(db, hits, attach);
        }),
      );
    },

    async count() {
      return attempt('count', () =>
        withConnection(knex, (db) => {
          heldDimensions(db);
          const row = db.prepare(`select count(*) as n from ${tables.items}`).get() as { n: number } | undefined;
          return Number(row?.n ?? 0);
        }),
      );
    },
  };
}

/**
 * Hits from sqlite-vec neighbours: score = 1 − d²/2 (cosine similarity of unit
 * vectors at L2 distance d, clamped to [−1, 1]), best first, equal scores by
 * id; `row` holds the attached columns of a neighbour read with them (none
 * when its attached row does not exist).
 */
function ranked(neighbours: readonly Neighbour[]): VectorHit[] {
  return neighbours
    .map((neighbour): VectorHit => {
      const hit: VectorHit = { id: neighbour.id, score: Math.min(1, Math.max(-1, 1 - (neighbour.distance * neighbour.distance) / 2)) };
      const row = attachedRow(neighbour);
      if (row !== undefined) hit.row = row;
      return hit;
    })
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
