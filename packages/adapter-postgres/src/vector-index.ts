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
import type { Knex } from 'knex';
import { z } from 'zod';
import { compareHits, scanByteaVectors } from './exact-vector-scan.js';
import {
  createPgVectorTables,
  createSearchFunction,
  HNSW_MAX_DIMENSIONS,
  type PgVectorLayout,
  pgVectorTables,
  readPgVectorLayout,
  VECTOR_MAX_DIMENSIONS,
} from './pg-vector-tables.js';
import { queryPrepared } from './prepared-statement.js';
import { vectorBinary, vectorBytes } from './vector-encoding.js';

/** Rows per multi-row INSERT (four bound parameters each, far below PostgreSQL's 65 535). */
const INSERT_BATCH = 500;
/** Most bound parameters per statement (PostgreSQL's limit is 65 535). */
const MAX_PARAMETERS = 30_000;

/** Options of {@link createPgVectorIndex}. */
export const pgVectorIndexOptions = z.object({
  /** A knex on pg; the index's objects go to the first schema of its `search_path`, which must also reach pgvector. */
  knex: knexOptionSchema,
  /** Name prefix of the index's tables, e.g. `memory_vectors` (at most 40 characters, so derived names fit in 63). */
  table: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,39}$/, 'table must be a plain identifier of at most 40 characters'),
  /** Receives one line when the index cannot use HNSW (no pgvector, or too many dimensions). */
  onNotice: z.custom<(line: string) => void>((value) => typeof value === 'function').optional(),
  /**
   * HNSW candidate list size per query (`hnsw.ef_search`, 1–1000; at least
   * `k` is used). Higher: better recall, slower queries. Default 100: recall@10 ≥ 0.99 on clustered data at 100k rows for ~0.15 ms more than pgvector's 40 (bench/memory-pg.ts).
   */
  efSearch: z.number().int().min(1).max(1000).default(100),
});
export type PgVectorIndexOptions = z.input<typeof pgVectorIndexOptions>;

const ensureOptions = z.object({ dimensions: z.number().int().min(1).max(VECTOR_MAX_DIMENSIONS) });

/** A row of the search function or the exact query: cosine distance in [0, 2], and any attached columns. */
type DistanceRow = { id: string; distance: number } & Record<string, unknown>;

/** Quoted table, column list and bindings of rows to insert alongside the vectors. */
interface InsertRows {
  table: string;
  columns: string[];
  values: SqlValue[][];
}

/** One statement and its bindings. */
interface Statement {
  sql: string;
  bindings: Knex.RawBinding[];
}

/**
 * Approximate cosine {@link VectorIndex} on PostgreSQL with pgvector (0.8+).
 *
 * Items live in `<table>_items` ({@link pgVectorTables}): `embedding
 * vector(<dimensions>)` with an HNSW index (`vector_cosine_ops`, pgvector's
 * defaults m = 16, ef_construction = 64) and `scope_keys text[]` (visibility
 * keys `self:<agent>` and `team:<name>`) with a GIN index. A query is one call
 * of `<table>_search`, which runs the filtered HNSW scan with
 * `hnsw.iterative_scan = relaxed_order` and re-sorts; should it still return
 * fewer than `k` rows (a filter matching few rows far from the query), an
 * exact query over the GIN-filtered rows answers instead, so a query always
 * returns exactly `min(k, matches)` hits. Scores are 1 − cosine distance,
 * best first, equal scores by id. The call is one named prepared statement
 * per connection ({@link queryPrepared}), with the query vector in pgvector's
 * binary format and, with `attach`, the attached table joined in the same
 * statement. Upserts with `insert` store the rows and the vectors in one
 * statement (a data-modifying CTE) when they fit, else in one transaction.
 *
 * Without pgvector (not installed and `CREATE EXTENSION vector` refused),
 * vectors are stored as float32 `bytea` and every query is an exact scan in
 * this process; one line through `onNotice` says so. Above 2000 dimensions
 * (HNSW's limit) queries are exact scans in SQL, also noticed once.
 *
 * @throws ZodError when options are invalid. Methods throw RangeError for
 *   vectors of the wrong dimension, zero vectors or a bad `k`, and an Error
 *   with the driver error as `cause` when PostgreSQL fails.
 */
export function createPgVectorIndex(options: PgVectorIndexOptions): VectorIndex {
  const { knex, table, onNotice, efSearch } = pgVectorIndexOptions.parse(options);
  const tables = pgVectorTables(table);
  let layout: PgVectorLayout | undefined;
  let noticed = false;

  /** Runs `work`, wrapping any failure that is not a caller mistake with the index name and operation. */
  async function attempt<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof RangeError) throw error;
      throw new Error(`postgres vector index ${table}: ${operation} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  /** Emits the one notice of this instance when the layout cannot use HNSW. */
  function noticeOnce(found: PgVectorLayout, reason?: string): void {
    if (noticed || onNotice === undefined) return;
    if (found.storage === 'bytea') {
      noticed = true;
      onNotice(
        `pgvector is not usable in this database${reason === undefined ? '' : ` (${reason})`}: vector index ${table} ` +
          'stores float32 bytes and answers every query with an exact scan, which slows down as it grows',
      );
    } else if (found.dimensions > HNSW_MAX_DIMENSIONS) {
      noticed = true;
      onNotice(
        `vector index ${table} has ${found.dimensions} dimensions, above pgvector's HNSW limit of ` +
          `${HNSW_MAX_DIMENSIONS}: every query is an exact scan`,
      );
    }
  }

  /** The recorded layout (read once; it never changes). */
  async function currentLayout(): Promise<PgVectorLayout> {
    if (layout !== undefined) return layout;
    const found = await readPgVectorLayout(knex, tables);
    if (found === undefined) throw new Error('the index does not exist yet; call ensure() first');
    noticeOnce(found);
    layout = found;
    return found;
  }

  /** The upsert statement of `batch` (one multi-row INSERT … ON CONFLICT) and its bindings. */
  function itemsStatement(held: PgVectorLayout, batch: readonly VectorItem[]): Statement {
    const { storage } = held;
    const embeddingCast = storage === 'vector' ? 'vector' : 'bytea';
    const bindings = batch.flatMap((item): Knex.RawBinding[] => {
      const unit = toUnitVector(item.vector, held.dimensions, `vector of item ${item.id}`);
      return [item.id, item.agentId, itemVisibilityKeys(item), storage === 'vector' ? vectorBinary(unit) : vectorBytes(unit)];
    });
    return {
      sql: `insert into ${tables.items} (id, agent_id, scope_keys, embedding)
         values ${batch.map(() => `(?, ?, ?::text[], ?::${embeddingCast})`).join(', ')}
         on conflict (id) do update
         set agent_id = excluded.agent_id, scope_keys = excluded.scope_keys, embedding = excluded.embedding`,
      bindings,
    };
  }

  /** The multi-row INSERT of `values` into the companion table and its bindings. */
  function rowsStatement(rows: InsertRows, values: readonly SqlValue[][]): Statement {
    const placeholders = `(${rows.columns.map(() => '?').join(', ')})`;
    return {
      sql: `insert into ${rows.table} (${rows.columns.join(', ')}) values ${values.map(() => placeholders).join(', ')}`,
      bindings: values.flat(),
    };
  }

  /**
   * Stores items and companion rows. When everything fits in one statement,
   * one round trip: the rows go in through a data-modifying CTE, which
   * PostgreSQL runs to completion as part of the same statement (atomic
   * without BEGIN/COMMIT). Otherwise one transaction of chunked statements.
   */
  async function store(held: PgVectorLayout, items: readonly VectorItem[], rows: InsertRows | null): Promise<void> {
    const rowParameters = rows === null ? 0 : rows.values.length * rows.columns.length;
    if (items.length <= INSERT_BATCH && items.length * 4 + rowParameters <= MAX_PARAMETERS) {
      const upsert = items.length > 0 ? itemsStatement(held, items) : null;
      const insert = rows !== null && rows.values.length > 0 ? rowsStatement(rows, rows.values) : null;
      if (upsert !== null && insert !== null) {
        await knex.raw(`with companion as (${insert.sql}) ${upsert.sql}`, [...insert.bindings, ...upsert.bindings]);
      } else if (upsert !== null || insert !== null) {
        const only = (upsert ?? insert) as Statement;
        await knex.raw(only.sql, only.bindings);
      }
      return;
    }
    await knex.transaction(async (trx) => {
      if (rows !== null) {
        const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / rows.columns.length));
        for (let start = 0; start < rows.values.length; start += perStatement) {
          const chunk = rowsStatement(rows, rows.values.slice(start, start + perStatement));
          await trx.raw(chunk.sql, chunk.bindings);
        }
      }
      for (let start = 0; start < items.length; start += INSERT_BATCH) {
        const chunk = itemsStatement(held, items.slice(start, start + INSERT_BATCH));
        await trx.raw(chunk.sql, chunk.bindings);
      }
    });
  }

  /** The select list and join that attach `attach`'s columns to result rows whose id is `alias.id`. */
  function attachment(attach: VectorAttach | undefined, alias: string): { columns: string; join: string } {
    if (attach === undefined) return { columns: '', join: '' };
    const { select, join } = attachSql(attach, `${alias}.id`);
    return { columns: `, ${select.join(', ')}`, join };
  }

  /** The attached rows of bytea-stored hits (a second query: the exact scan runs in this process). */
  async function attachAfterScan(hits: VectorHit[], attach: VectorAttach | undefined): Promise<VectorHit[]> {
    if (attach === undefined || hits.length === 0) return hits;
    const { table, key, select } = attachSql(attach, 'attached.id');
    const { rows } = await knex.raw(`select ${select.join(', ')} from ${table} attached where attached.${key} = any(?::text[])`, [
      hits.map((hit) => hit.id),
    ]);
    const byKey = new Map((rows as Array<Record<string, unknown>>).map((row) => [String(row['attached.']), attachedRow(row)]));
    return hits.map((hit) => {
      const row = byKey.get(hit.id);
      return row === undefined ? hit : { ...hit, row };
    });
  }

  async function exactQuery(keys: string[], vector: Buffer, k: number, attach: VectorAttach | undefined): Promise<DistanceRow[]> {
    const { columns, join } = attachment(attach, 'e');
    const { rows } = await knex.raw(
      `with c as materialized (select id, embedding from ${tables.items} where scope_keys && ?::text[]),
       e as (select id, embedding <=> ?::vector as distance from c order by distance, id collate "C" limit ?)
       select e.id, e.distance${columns} from e ${join}`,
      [keys, vector, k],
    );
    return rows as DistanceRow[];
  }

  return {
    async ensure(request) {
      const { dimensions } = ensureOptions.parse(request);
      const { held, reason } = await attempt('ensure', () =>
        knex.transaction(async (trx) => {
          await trx.raw(`select pg_advisory_xact_lock(hashtext(current_schema() || '.' || ?))`, [tables.metaName]);
          const existing = await readPgVectorLayout(trx, tables);
          if (existing !== undefined) {
            if (existing.storage === 'vector') await createSearchFunction(trx, tables);
            return { held: existing, reason: undefined };
          }
          const pgvector = await preparePgvector(trx);
          const created: PgVectorLayout = { dimensions, storage: pgvector.usable ? 'vector' : 'bytea' };
          await createPgVectorTables(trx, tables, created);
          return { held: created, reason: pgvector.usable ? undefined : pgvector.reason };
        }),
      );
      if (held.dimensions !== dimensions) {
        throw new RangeError(`postgres vector index ${table} holds ${held.dimensions}-dimensional vectors, not ${dimensions}`);
      }
      noticeOnce(held, reason);
      layout = held;
    },

    async upsert({ items, insert }) {
      const shape = insertShape(insert);
      if (items.length === 0 && shape === null) return;
      const rows: InsertRows | null =
        shape === null ? null : { ...shape, values: (insert?.rows ?? []).map((row) => shape.names.map((name) => row[name] as SqlValue)) };
      await attempt('upsert', async () => {
        const held = await currentLayout();
        const latest = [...new Map(items.map((item) => [item.id, item])).values()];
        await store(held, latest, rows);
      });
    },

    async remove({ ids }) {
      if (ids.length === 0) return 0;
      return attempt('remove', async () => {
        await currentLayout();
        const result = await knex.raw(`delete from ${tables.items} where id = any(?::text[])`, [[...new Set(ids)]]);
        return Number((result as { rowCount: number | null }).rowCount ?? 0);
      });
    },

    async query({ vector, k, filter, attach }) {
      if (!Number.isInteger(k) || k < 0) throw new RangeError(`k must be a non-negative integer, got ${k}`);
      if (attach !== undefined) attachSql(attach, 's.id');
      return attempt('query', async () => {
        const { dimensions, storage } = await currentLayout();
        const unit = toUnitVector(vector, dimensions, 'query vector');
        const keys = filterVisibilityKeys(filter);
        if (k === 0 || keys.length === 0) return [];
        if (storage === 'bytea')
          return attachAfterScan(await scanByteaVectors({ knex, items: tables.items, keys, query: unit, k }), attach);
        const binary = vectorBinary(unit);
        const { columns, join } = attachment(attach, 's');
        const rows = await queryPrepared<DistanceRow>(
          knex,
          `select s.id, s.distance${columns} from ${tables.search}($1::vector, $2::text[], $3, $4) s ${join}`,
          [binary, keys, k, efSearch],
        );
        return ranked(rows.length === k ? rows : await exactQuery(keys, binary, k, attach));
      });
    },

    async count() {
      return attempt('count', async () => {
        await currentLayout();
        const { rows } = await knex.raw(`select count(*) as n from ${tables.items}`);
        return Number((rows[0] as { n: number | string } | undefined)?.n ?? 0);
      });
    },
  };
}

/**
 * Hits from cosine distances: score = 1 − distance clamped to [−1, 1], best
 * first, equal scores by id; attached columns become `row` when the attached
 * row exists.
 */
function ranked(rows: readonly DistanceRow[]): VectorHit[] {
  return rows
    .map((row) => {
      const hit: VectorHit = { id: row.id, score: Math.min(1, Math.max(-1, 1 - row.distance)) };
      const attached = attachedRow(row);
      if (attached !== undefined) hit.row = attached;
      return hit;
    })
    .sort(compareHits);
}

/**
 * Whether the `vector` type can be used: the extension is installed in this
 * database, or `CREATE EXTENSION IF NOT EXISTS vector` succeeds now (inside a
 * savepoint, so a refusal leaves `trx` usable).
 * @returns `{ usable: false, reason }` with the server's message when not.
 */
async function preparePgvector(trx: Knex.Transaction): Promise<{ usable: true } | { usable: false; reason: string }> {
  const installed = await trx.raw(`select 1 from pg_extension where extname = 'vector'`);
  if (installed.rows.length > 0) return { usable: true };
  try {
    await trx.transaction((savepoint) => savepoint.raw('create extension if not exists vector'));
    return { usable: true };
  } catch (error) {
    return { usable: false, reason: (error as Error).message };
  }
}
