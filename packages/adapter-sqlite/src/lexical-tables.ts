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
 *   stored twice, only its inverted index;
 * - `<p>_meta` (`key`, `value`): the build `state` and the backfill `cursor`;
 * - triggers `<p>_after_insert`, `<p>_after_delete`, `<p>_after_update` on
 *   the source table.
 */
export interface SqliteLexicalTables {
  docs: string;
  fts: string;
  meta: string;
  triggers: { insert: string; delete: string; update: string };
  /** Unquoted trigger names, as `sqlite_master` lists them. */
  triggerNames: string[];
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
    meta: quote('meta'),
    triggers: { insert: quote('after_insert'), delete: quote('after_delete'), update: quote('after_update') },
    triggerNames: ['after_insert', 'after_delete', 'after_update'].map((suffix) => `${prefix}_${suffix}`),
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

/** Statements that drop the doc of source key `keySql` (its FTS row first). */
function removeDoc(tables: SqliteLexicalTables, keySql: string): string {
  return (
    `delete from ${tables.fts} where rowid = (select rid from ${tables.docs} where id = ${keySql});\n` +
    `delete from ${tables.docs} where id = ${keySql};`
  );
}

/** Statements that index source row `new` (any doc left under its key is replaced). */
function addDoc(tables: SqliteLexicalTables): string {
  const { key, text } = tables.source;
  return (
    `${removeDoc(tables, `new.${key}`)}\n` +
    `insert into ${tables.docs} (id, keys) values (new.${key}, ${keysExpression(tables, 'new')});\n` +
    `insert into ${tables.fts} (rowid, text) values (last_insert_rowid(), new.${text});`
  );
}

/**
 * Creates the index's tables and the source's triggers when missing, in the
 * caller's transaction.
 * @returns whether any trigger was missing (the index did not follow the
 *   source until now, so it must be rebuilt from it).
 */
export function createSqliteLexicalTables(db: BetterSqlite3.Database, tables: SqliteLexicalTables): boolean {
  const { source } = tables;
  db.exec(`create table if not exists ${tables.meta} (key text primary key, value text not null)`);
  db.exec(`create table if not exists ${tables.docs} (rid integer primary key, id text not null unique, keys text not null)`);
  db.exec(
    `create virtual table if not exists ${tables.fts} using fts5(
       text, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
     )`,
  );
  const present = db
    .prepare(`select count(*) as n from sqlite_master where type = 'trigger' and name in (select value from json_each(?))`)
    .get(JSON.stringify(tables.triggerNames)) as { n: number };
  if (present.n === tables.triggerNames.length) return false;
  for (const name of tables.triggerNames) db.exec(`drop trigger if exists "${name}"`);
  db.exec(
    `create trigger ${tables.triggers.insert} after insert on ${source.table} when ${source.only('new')} begin
       ${addDoc(tables)}
     end`,
  );
  db.exec(
    `create trigger ${tables.triggers.delete} after delete on ${source.table} when ${source.only('old')} begin
       ${removeDoc(tables, `old.${source.key}`)}
     end`,
  );
  db.exec(
    `create trigger ${tables.triggers.update} after update on ${source.table} begin
       ${removeDoc(tables, `old.${source.key}`)}
       ${removeDoc(tables, `new.${source.key}`)}
       insert into ${tables.docs} (id, keys) select new.${source.key}, ${keysExpression(tables, 'new')} where ${source.only('new')};
       insert into ${tables.fts} (rowid, text) select rid, new.${source.text} from ${tables.docs}
         where id = new.${source.key} and ${source.only('new')};
     end`,
  );
  return true;
}
