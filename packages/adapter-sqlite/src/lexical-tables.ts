import type { LexicalSource } from '@agentinfra/core';
import { quoteIdentifier } from '@agentinfra/core';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * Quoted names of the objects behind one SQLite lexical index with prefix
 * `<p>` (e.g. `memory_lexical`), and of its source's columns:
 * - `<p>_docs` (`rid`, `id`, `keys`): one row per indexed source row, `keys`
 *   its visibility keys as a JSON array (`self:<agent>`, `team:<name>`);
 * - `<p>_fts`: a contentless FTS5 table (`porter unicode61`, with
 *   `contentless_delete`) whose rowid is the doc's `rid`; the text is not
 *   stored twice, only the inverted index of its NFKC form;
 * - `<p>_queue` (`id`): keys of source rows inserted or changed since they
 *   were last indexed, written in the source row's transaction and indexed
 *   in batches later (see lexical-queue.ts);
 * - `<p>_meta` (`key`, `value`): the build `state`, the backfill `cursor` and
 *   the `text_form` of the indexed text (see lexical-text-form.ts);
 * - triggers `<p>_on_insert`, `<p>_on_delete`, `<p>_on_update` on the
 *   source table.
 */
export interface SqliteLexicalTables {
  docs: string;
  fts: string;
  queue: string;
  meta: string;
  triggers: { insert: string; delete: string; update: string };
  /** Unquoted trigger names, as `sqlite_master` lists them. */
  triggerNames: string[];
  /**
   * Unquoted names of the triggers of the first version, which indexed each
   * row inside its own transaction: replaced by {@link triggerNames} on
   * upgrade, keeping the index they kept.
   */
  legacyTriggerNames: string[];
  source: {
    table: string;
    key: string;
    text: string;
    owner: string;
    scopes: string;
    /** SQL condition on a source row alias (`new`, `old`, `s`), or `1` when every row is indexed. */
    only(alias: string): string;
  };
}

/** `value` as an SQL string literal. */
const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

/**
 * The objects of the index with prefix `prefix` (a plain identifier checked by
 * the caller) over `source`.
 * @throws RangeError when a source name is not a plain identifier.
 */
export function sqliteLexicalTables(prefix: string, source: LexicalSource): SqliteLexicalTables {
  const quote = (suffix: string) => `"${prefix}_${suffix}"`;
  const only = source.only;
  const onlyColumn = only === undefined ? undefined : quoteIdentifier(only.column, 'source only column');
  return {
    docs: quote('docs'),
    fts: quote('fts'),
    queue: quote('queue'),
    meta: quote('meta'),
    triggers: { insert: quote('on_insert'), delete: quote('on_delete'), update: quote('on_update') },
    triggerNames: ['on_insert', 'on_delete', 'on_update'].map((suffix) => `${prefix}_${suffix}`),
    legacyTriggerNames: ['after_insert', 'after_delete', 'after_update'].map((suffix) => `${prefix}_${suffix}`),
    source: {
      table: quoteIdentifier(source.table, 'source table'),
      key: quoteIdentifier(source.key, 'source key'),
      text: quoteIdentifier(source.text, 'source text'),
      owner: quoteIdentifier(source.owner, 'source owner'),
      scopes: quoteIdentifier(source.scopes, 'source scopes'),
      only: (alias) => (only === undefined ? '1' : `${alias}.${onlyColumn} = ${literal(only.equals)}`),
    },
  };
}

/**
 * SQL of a source row's visibility keys as a sorted JSON array: `self:<owner>`
 * when its scopes hold `self`, and each `team:<name>` scope; other entries
 * are never keys (the same rule as `itemVisibilityKeys` in core).
 */
export function keysExpression(tables: SqliteLexicalTables, alias: string): string {
  const { owner, scopes } = tables.source;
  return `(select coalesce(json_group_array(k), '[]') from (
      select distinct case when j.value = 'self' then 'self:' || ${alias}.${owner} else j.value end as k
      from json_each(${alias}.${scopes}) j
      where j.type = 'text' and (j.value = 'self' or substr(j.value, 1, 5) = 'team:')
      order by 1))`;
}

/** The two statements that drop the doc of source key `keySql`: its FTS row, then the doc. */
export function removeDocStatements(tables: SqliteLexicalTables, keySql: string): [string, string] {
  return [
    `delete from ${tables.fts} where rowid = (select rid from ${tables.docs} where id = ${keySql});`,
    `delete from ${tables.docs} where id = ${keySql};`,
  ];
}

/** How many of `names` are triggers in the database. */
function countTriggers(db: BetterSqlite3.Database, names: readonly string[]): number {
  const present = db
    .prepare(`select count(*) as n from sqlite_master where type = 'trigger' and name in (select value from json_each(?))`)
    .get(JSON.stringify(names)) as { n: number };
  return present.n;
}

/**
 * Creates the index's tables and the source's triggers when missing, in the
 * caller's transaction. The triggers do no full-text work: an inserted or
 * changed row's key goes to `<p>_queue` (its doc, if any, is dropped), a
 * deleted row's doc is dropped; queued rows are indexed by `flushLexicalQueue`.
 * Triggers of the first version (which indexed in the row's transaction)
 * are replaced, and the index they kept is kept.
 * @returns whether the index must be rebuilt from the source: its triggers
 *   were missing (a new index, or a source table dropped and created again).
 */
export function createSqliteLexicalTables(db: BetterSqlite3.Database, tables: SqliteLexicalTables): boolean {
  const { source } = tables;
  db.exec(`create table if not exists ${tables.meta} (key text primary key, value text not null)`);
  db.exec(`create table if not exists ${tables.docs} (rid integer primary key, id text not null unique, keys text not null)`);
  db.exec(`create table if not exists ${tables.queue} (id text primary key) without rowid`);
  db.exec(
    `create virtual table if not exists ${tables.fts} using fts5(
       text, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
     )`,
  );
  if (countTriggers(db, tables.triggerNames) === tables.triggerNames.length) return false;
  const followed = countTriggers(db, tables.legacyTriggerNames) === tables.legacyTriggerNames.length;
  for (const name of [...tables.triggerNames, ...tables.legacyTriggerNames]) db.exec(`drop trigger if exists "${name}"`);
  const enqueue = (alias: string) =>
    `insert or ignore into ${tables.queue} (id) select ${alias}.${source.key} where ${source.only(alias)};`;
  db.exec(
    `create trigger ${tables.triggers.insert} after insert on ${source.table} when ${source.only('new')} begin
       ${enqueue('new')}
     end`,
  );
  db.exec(
    `create trigger ${tables.triggers.delete} after delete on ${source.table} when ${source.only('old')} begin
       ${removeDocStatements(tables, `old.${source.key}`).join('\n')}
       delete from ${tables.queue} where id = old.${source.key};
     end`,
  );
  db.exec(
    `create trigger ${tables.triggers.update} after update on ${source.table} begin
       ${removeDocStatements(tables, `old.${source.key}`).join('\n')}
       ${removeDocStatements(tables, `new.${source.key}`).join('\n')}
       delete from ${tables.queue} where id = old.${source.key};
       ${enqueue('new')}
     end`,
  );
  return !followed;
}
