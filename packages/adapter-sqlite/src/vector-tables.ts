import type { Knex } from 'knex';

/**
 * Quoted names of the tables behind one SQLite vector index, all starting with
 * its prefix (e.g. `memory_vectors`):
 * - `<prefix>_meta` (`key`, `value`): the index's `dimensions`;
 * - `<prefix>_items` (`rid`, `id`, `agent_id`, `set_id`): one row per item;
 * - `<prefix>_scope_sets` (`set_id`, `signature`): each distinct set of
 *   visibility keys, shared by all items with that set;
 * - `<prefix>_scope_keys` (`scope_key`, `set_id`): which sets hold a key, the
 *   index that turns a filter into set ids;
 * - `<prefix>_vectors`: a sqlite-vec `vec0` table (rowid = `rid`, `embedding`
 *   as `float[dimensions]`, L2 distance, metadata column `set_id`), which
 *   creates its own `<prefix>_vectors_*` shadow tables.
 */
export interface SqliteVectorTables {
  meta: string;
  items: string;
  /** Index of `items` by `set_id`, used to drop sets no item uses any more. */
  itemsBySet: string;
  scopeSets: string;
  scopeKeys: string;
  vectors: string;
}

/** The tables of the index with name prefix `prefix` (a plain identifier, checked by the caller). */
export function sqliteVectorTables(prefix: string): SqliteVectorTables {
  const quote = (suffix: string) => `"${prefix}_${suffix}"`;
  return {
    meta: quote('meta'),
    items: quote('items'),
    itemsBySet: quote('items_set_id'),
    scopeSets: quote('scope_sets'),
    scopeKeys: quote('scope_keys'),
    vectors: quote('vectors'),
  };
}

/**
 * Creates the tables for `dimensions` when missing, inside `trx`, and returns
 * the dimensions the index holds (those of an existing index win; the caller
 * compares). Statements are `IF NOT EXISTS`, so concurrent callers converge.
 */
export async function createSqliteVectorTables(trx: Knex.Transaction, tables: SqliteVectorTables, dimensions: number): Promise<number> {
  await trx.raw(`create table if not exists ${tables.meta} (key text primary key, value text not null)`);
  await trx.raw(`insert into ${tables.meta} (key, value) values ('dimensions', ?) on conflict (key) do nothing`, [String(dimensions)]);
  const [stored] = (await trx.raw(`select value from ${tables.meta} where key = 'dimensions'`)) as Array<{
    value: string;
  }>;
  const held = Number(stored?.value);
  if (held !== dimensions) return held;
  await trx.raw(
    `create table if not exists ${tables.items} (
       rid integer primary key,
       id text not null unique,
       agent_id text not null,
       set_id integer not null
     )`,
  );
  await trx.raw(`create index if not exists ${tables.itemsBySet} on ${tables.items} (set_id)`);
  await trx.raw(`create table if not exists ${tables.scopeSets} (set_id integer primary key, signature text not null unique)`);
  await trx.raw(
    `create table if not exists ${tables.scopeKeys} (
       scope_key text not null,
       set_id integer not null,
       primary key (scope_key, set_id)
     ) without rowid`,
  );
  await trx.raw(`create virtual table if not exists ${tables.vectors} using vec0(embedding float[${dimensions}], set_id integer)`);
  return dimensions;
}
