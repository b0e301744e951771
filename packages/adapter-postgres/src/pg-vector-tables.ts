import type { Knex } from 'knex';

/** Largest number of dimensions pgvector's HNSW index takes for the `vector` type. */
export const HNSW_MAX_DIMENSIONS = 2000;
/** Largest number of dimensions of pgvector's `vector` type. */
export const VECTOR_MAX_DIMENSIONS = 16000;

/**
 * How an index stores its vectors: `vector` (pgvector column, HNSW index with
 * `vector_cosine_ops`) or `bytea` (float32 bytes, exact scan in the adapter),
 * used when the `vector` extension cannot be created in the database.
 */
export type PgVectorStorage = 'vector' | 'bytea';

/** What `<prefix>_meta` records about an index. */
export interface PgVectorLayout {
  dimensions: number;
  storage: PgVectorStorage;
}

/**
 * Quoted names of the objects behind one PostgreSQL vector index, all starting
 * with its prefix (e.g. `memory_vectors`), created in the first schema of the
 * connection's `search_path`:
 * - `<prefix>_meta`: one row (`dimensions`, `storage`);
 * - `<prefix>_items` (`id`, `agent_id`, `scope_keys text[]`, `embedding`);
 * - `<prefix>_items_scope_keys`: GIN index on `scope_keys` (the filter);
 * - `<prefix>_items_embedding`: HNSW index (`vector` storage, at most 2000 dimensions);
 * - `<prefix>_search(q, keys, k, ef)`: the filtered HNSW query with its settings.
 */
export interface PgVectorTables {
  meta: string;
  items: string;
  scopeKeysIndex: string;
  embeddingIndex: string;
  search: string;
  /** Unquoted `<prefix>_meta`, for `to_regclass`. */
  metaName: string;
}

/** The objects of the index with name prefix `prefix` (a plain identifier, checked by the caller). */
export function pgVectorTables(prefix: string): PgVectorTables {
  const quote = (suffix: string) => `"${prefix}_${suffix}"`;
  return {
    meta: quote('meta'),
    items: quote('items'),
    scopeKeysIndex: quote('items_scope_keys'),
    embeddingIndex: quote('items_embedding'),
    search: quote('search'),
    metaName: `${prefix}_meta`,
  };
}

/**
 * The recorded layout, or undefined when the index has not been ensured in
 * this schema. Only the current schema counts: with a search path such as
 * `[schema, public]`, a same-named table in `public` must not be mistaken
 * for this schema's index.
 */
export async function readPgVectorLayout(db: Knex | Knex.Transaction, tables: PgVectorTables): Promise<PgVectorLayout | undefined> {
  const found = await db.raw(`select to_regclass(quote_ident(current_schema()) || '.' || quote_ident(?)) is not null as present`, [
    tables.metaName,
  ]);
  if (!(found.rows[0] as { present: boolean } | undefined)?.present) return undefined;
  const { rows } = await db.raw(`select dimensions, storage from ${tables.meta}`);
  const row = rows[0] as { dimensions: number; storage: PgVectorStorage } | undefined;
  return row === undefined ? undefined : { dimensions: Number(row.dimensions), storage: row.storage };
}

/**
 * Creates the meta table, the items table for `layout`, its indexes and (for
 * `vector` storage) the search function, inside `trx`. Statements are
 * `IF NOT EXISTS` / `OR REPLACE`; the caller serialises concurrent callers.
 */
export async function createPgVectorTables(trx: Knex.Transaction, tables: PgVectorTables, layout: PgVectorLayout): Promise<void> {
  const column = layout.storage === 'vector' ? `vector(${layout.dimensions})` : 'bytea';
  await trx.raw(
    `create table if not exists ${tables.meta} (
       singleton boolean primary key default true check (singleton),
       dimensions integer not null,
       storage text not null check (storage in ('vector', 'bytea'))
     )`,
  );
  await trx.raw(
    `create table if not exists ${tables.items} (
       id text primary key,
       agent_id text not null,
       scope_keys text[] not null,
       embedding ${column} not null
     )`,
  );
  await trx.raw(`create index if not exists ${tables.scopeKeysIndex} on ${tables.items} using gin (scope_keys)`);
  if (layout.storage === 'vector') {
    if (layout.dimensions <= HNSW_MAX_DIMENSIONS) {
      await trx.raw(`create index if not exists ${tables.embeddingIndex} on ${tables.items} using hnsw (embedding vector_cosine_ops)`);
    }
    await createSearchFunction(trx, tables);
  }
  await trx.raw(`insert into ${tables.meta} (dimensions, storage) values (?, ?) on conflict (singleton) do nothing`, [
    layout.dimensions,
    layout.storage,
  ]);
}

/**
 * `<prefix>_search(q vector, keys text[], k integer, ef integer)` returns
 * `(id, distance)`: the `k` nearest rows by cosine distance among those whose
 * `scope_keys` meet `keys`, ordered by distance then id (byte order).
 *
 * One round trip carries the query and its settings: the function's `SET`
 * clauses scope `hnsw.iterative_scan = relaxed_order` (pgvector 0.8: the
 * HNSW scan keeps going until `k` rows pass the filter, up to
 * `hnsw.max_scan_tuples`) and `hnsw.ef_search = max(ef, k)` (capped at 1000)
 * to this call. The relaxed order is fixed by the final sort over a
 * materialised CTE. `EXECUTE … USING` plans each call with its values, so the
 * planner may pick the GIN index plus an exact sort when few rows match.
 * `ROWS 10` (a typical k) tells the planner of a caller joining the result
 * to another table (the attached records) to look those rows up by key
 * rather than scan the table for a thousand rows, the default estimate.
 * `CREATE OR REPLACE`, so every `ensure` brings the function up to date.
 */
export async function createSearchFunction(trx: Knex.Transaction, tables: PgVectorTables): Promise<void> {
  const inner =
    `with c as materialized (` +
    `select i.id, i.embedding <=> $1 as d from ${tables.items} i where i.scope_keys && $2 ` +
    `order by i.embedding <=> $1 limit $3) ` +
    `select c.id, c.d from c order by c.d, c.id collate "C"`;
  await trx.raw(
    `create or replace function ${tables.search}(q vector, keys text[], k integer, ef integer)
     returns table (id text, distance double precision)
     language plpgsql stable rows 10
     set hnsw.iterative_scan = 'relaxed_order'
     set hnsw.ef_search = '40'
     as $search$
     begin
       perform set_config('hnsw.ef_search', least(greatest(ef, k), 1000)::text, true);
       return query execute ${quoteLiteral(inner)} using q, keys, k;
     end
     $search$`,
  );
}

/** `text` as a SQL string literal (single quotes doubled); `text` holds only identifiers this module built. */
function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
