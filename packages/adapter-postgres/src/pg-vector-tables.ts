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
 * - `<prefix>_search(q, keys, k, ef, exact_below)`: the filtered query (exact or HNSW) with its settings.
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
 * `<prefix>_search(q vector, keys text[], k integer, ef integer, exact_below integer)`
 * returns `(id, distance)`: the `k` nearest rows by cosine distance among
 * those whose `scope_keys` meet `keys`, ordered by distance then id (byte
 * order), always `min(k, matches)` rows. One call, one round trip, whichever
 * path answers:
 *
 * - exact, when the filter is selective (pgvector's advice for conditions
 *   matching a low percentage of rows): the matching rows are read through
 *   the GIN index, at most n = max(exact_below, k + 1) of them, with their
 *   distances; fewer than n means that was all of them, and their top `k` is
 *   the answer. Without this, a filtered HNSW scan for a small agent walks
 *   the graph up to `hnsw.max_scan_tuples` (20 000) looking for rows that are
 *   not there, and the planner, which only has an estimate of the matches,
 *   takes that scan when its statistics say a few hundred rows match.
 *   `exact_below` 0 skips this step.
 * - HNSW otherwise: the filtered scan with `hnsw.iterative_scan =
 *   relaxed_order` (pgvector 0.8: it keeps going until `k` rows pass the
 *   filter, up to `hnsw.max_scan_tuples`) and `hnsw.ef_search = max(ef, k)`
 *   (capped at 1000); the final sort fixes the relaxed order. Should the scan
 *   give up with fewer than `k` rows, the exact query over all the matching
 *   rows answers instead.
 *
 * The `SET` clauses scope those settings, and `enable_seqscan = off` (every
 * statement here reads through the GIN or HNSW index), to this call.
 * `EXECUTE … USING` plans each statement with its values; the exact query
 * computes distances in a materialised CTE, so no plan can read it in HNSW
 * order. `ROWS 10` (a typical k) tells the planner of a caller joining the
 * result to another table (the attached records) to look those rows up by
 * key rather than scan the table for a thousand rows, the default estimate.
 * `CREATE OR REPLACE`, so every `ensure` brings the function up to date. The
 * four-argument function of earlier versions (HNSW only) is left in place
 * for processes still calling it during an upgrade.
 */
export async function createSearchFunction(trx: Knex.Transaction, tables: PgVectorTables): Promise<void> {
  /** Matching rows (at most $3; null: all), their number, and the top $4 of them by distance as two arrays. */
  const exact =
    `with e as materialized (` +
    `select i.id, i.embedding <=> $1 as d from ${tables.items} i where i.scope_keys && $2 limit $3), ` +
    `t as (select e.id, e.d from e order by e.d, e.id collate "C" limit $4) ` +
    `select (select count(*)::integer from e), ` +
    `(select array_agg(t.id order by t.d, t.id collate "C") from t), (select array_agg(t.d order by t.d, t.id collate "C") from t)`;
  const approximate =
    `with c as materialized (` +
    `select i.id, i.embedding <=> $1 as d from ${tables.items} i where i.scope_keys && $2 ` +
    `order by i.embedding <=> $1 limit $3) ` +
    `select array_agg(c.id order by c.d, c.id collate "C"), array_agg(c.d order by c.d, c.id collate "C") from c`;
  await trx.raw(
    `create or replace function ${tables.search}(q vector, keys text[], k integer, ef integer, exact_below integer)
     returns table (id text, distance double precision)
     language plpgsql stable rows 10
     set hnsw.iterative_scan = 'relaxed_order'
     set hnsw.ef_search = '40'
     set enable_seqscan = off
     as $search$
     declare
       bound integer := greatest(exact_below, k + 1);
       matched integer := 0;
       ids text[];
       distances double precision[];
     begin
       if exact_below > 0 then
         execute ${quoteLiteral(exact)} into matched, ids, distances using q, keys, bound, k;
       end if;
       if exact_below <= 0 or matched >= bound then
         perform set_config('hnsw.ef_search', least(greatest(ef, k), 1000)::text, true);
         execute ${quoteLiteral(approximate)} into ids, distances using q, keys, k;
         if coalesce(cardinality(ids), 0) < k then
           execute ${quoteLiteral(exact)} into matched, ids, distances using q, keys, null::integer, k;
         end if;
       end if;
       return query select u.hit, u.dist from unnest(ids, distances) with ordinality u(hit, dist, n) order by u.n;
     end
     $search$`,
  );
}

/** `text` as a SQL string literal (single quotes doubled); `text` holds only identifiers this module built. */
function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
