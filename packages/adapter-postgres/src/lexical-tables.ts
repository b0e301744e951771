import type { LexicalSource } from '@agentinfra/core';
import { quoteIdentifier } from '@agentinfra/core';
import type { Knex } from 'knex';
import { indexedTextExpression } from './lexical-text-form.js';

/**
 * Names of the objects behind one PostgreSQL lexical index with prefix `<p>`
 * (e.g. `memory_lexical`), and of its source's columns:
 * - `<p>_docs` (`id` primary key, `keys text[]`, `doc tsvector`): one row per
 *   indexed source row, with GIN indexes on `doc` and on `keys` (visibility
 *   keys `self:<agent>`, `team:<name>`);
 * - `<p>_meta` (`key`, `value`): the build `state`, the backfill `cursor` and
 *   the `text_form` of the documents (see lexical-text-form.ts);
 * - functions `<p>_on_insert()`, `<p>_on_delete()`, `<p>_on_update()` and the
 *   statement-level triggers `<p>_after_insert|delete|update` on the source
 *   table that call them with the statement's transition tables (one
 *   INSERT … SELECT per statement, not one per row).
 */
export interface PgLexicalTables {
  docs: string;
  docsIndex: string;
  keysIndex: string;
  meta: string;
  functions: { insert: string; delete: string; update: string };
  triggers: { insert: string; delete: string; update: string };
  /** Unquoted trigger names, as `pg_trigger` lists them. */
  triggerNames: string[];
  source: {
    /** Unquoted table name. */
    name: string;
    table: string;
    key: string;
    text: string;
    owner: string;
    scopes: string;
    /** SQL condition on a source row alias, or `true` when every row is indexed. */
    only(alias: string): string;
  };
}

/** `value` as an SQL string literal (single quotes doubled; standard_conforming_strings is on since PostgreSQL 9.1). */
const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

/**
 * The objects of the index with prefix `prefix` (a plain identifier of at
 * most 40 characters, checked by the caller) over `source`.
 * @throws RangeError when a source name is not a plain identifier.
 */
export function pgLexicalTables(prefix: string, source: LexicalSource): PgLexicalTables {
  const quote = (suffix: string) => `"${prefix}_${suffix}"`;
  const only = source.only;
  const onlyColumn = only === undefined ? undefined : quoteIdentifier(only.column, 'source only column');
  return {
    docs: quote('docs'),
    docsIndex: quote('docs_doc'),
    keysIndex: quote('docs_keys'),
    meta: quote('meta'),
    functions: { insert: quote('on_insert'), delete: quote('on_delete'), update: quote('on_update') },
    triggers: { insert: quote('after_insert'), delete: quote('after_delete'), update: quote('after_update') },
    triggerNames: ['after_insert', 'after_delete', 'after_update'].map((suffix) => `${prefix}_${suffix}`),
    source: {
      name: source.table,
      table: quoteIdentifier(source.table, 'source table'),
      key: quoteIdentifier(source.key, 'source key'),
      text: quoteIdentifier(source.text, 'source text'),
      owner: quoteIdentifier(source.owner, 'source owner'),
      scopes: quoteIdentifier(source.scopes, 'source scopes'),
      only: (alias) => (only === undefined ? 'true' : `${alias}.${onlyColumn} = ${literal(only.equals)}`),
    },
  };
}

/**
 * SQL of a source row's visibility keys (sorted `text[]`): `self:<owner>` when
 * its scopes hold `self`, and each `team:<name>` scope; other entries are
 * never keys (the same rule as `itemVisibilityKeys` in core).
 */
export function keysExpression(tables: PgLexicalTables, alias: string): string {
  const { owner, scopes } = tables.source;
  return `array(select distinct case when j = 'self' then 'self:' || ${alias}.${owner} else j end
      from jsonb_array_elements_text(${alias}.${scopes}::jsonb) j
      where j = 'self' or left(j, 5) = 'team:' order by 1)`;
}

/**
 * SQL of a source row's document: its text in NFKC ({@link indexedTextExpression}),
 * with every run of characters other than letters and digits made a space (so
 * `api.northwind.example` is three words, as `lexicalTerms` splits a query),
 * through the `english` configuration (Snowball stemmer, stop words).
 */
export function documentExpression(tables: PgLexicalTables, alias: string): string {
  const text = indexedTextExpression(`${alias}.${tables.source.text}`);
  return `to_tsvector('english', regexp_replace(${text}, '[^[:alnum:]]+', ' ', 'g'))`;
}

/** The INSERT of the docs of the selected rows of `from` (a relation aliased `n`), replacing any doc under the same id. */
function insertDocs(tables: PgLexicalTables, from: string): string {
  return `insert into ${tables.docs} (id, keys, doc)
    select n.${tables.source.key}, ${keysExpression(tables, 'n')}, ${documentExpression(tables, 'n')}
    from ${from} n where ${tables.source.only('n')}
    on conflict (id) do update set keys = excluded.keys, doc = excluded.doc`;
}

/** The DELETE of the docs of the rows of `from` (a transition table). */
function deleteDocs(tables: PgLexicalTables, from: string): string {
  return `delete from ${tables.docs} d using ${from} o where d.id = o.${tables.source.key}`;
}

/** A plpgsql trigger function running `statements`. */
async function createTriggerFunction(trx: Knex.Transaction, name: string, statements: string[]): Promise<void> {
  await trx.raw(
    `create or replace function ${name}() returns trigger language plpgsql as $body$
     begin
       ${statements.map((statement) => `${statement};`).join('\n')}
       return null;
     end
     $body$`,
  );
}

/**
 * Creates the tables, indexes and trigger functions when missing (functions
 * are replaced, so their bodies follow this code), and the source's triggers
 * when any is missing, inside `trx`; the caller serialises concurrent callers.
 * @returns whether any trigger was missing (the index did not follow the
 *   source until now, so it must be rebuilt from it).
 * @throws Error when the source table does not exist in the current schema.
 */
export async function createPgLexicalTables(trx: Knex.Transaction, tables: PgLexicalTables): Promise<boolean> {
  const { source } = tables;
  await trx.raw(`create table if not exists ${tables.meta} (key text primary key, value text not null)`);
  await trx.raw(`create table if not exists ${tables.docs} (id text primary key, keys text[] not null, doc tsvector not null)`);
  await trx.raw(`create index if not exists ${tables.docsIndex} on ${tables.docs} using gin (doc)`);
  await trx.raw(`create index if not exists ${tables.keysIndex} on ${tables.docs} using gin (keys)`);
  await createTriggerFunction(trx, tables.functions.insert, [insertDocs(tables, 'added')]);
  await createTriggerFunction(trx, tables.functions.delete, [deleteDocs(tables, 'removed')]);
  await createTriggerFunction(trx, tables.functions.update, [deleteDocs(tables, 'before_rows'), insertDocs(tables, 'after_rows')]);
  const { rows } = await trx.raw(
    `select count(*)::int as n from pg_trigger
     where tgrelid = to_regclass(quote_ident(current_schema()) || '.' || quote_ident(?)) and tgname = any(?::text[])`,
    [source.name, tables.triggerNames],
  );
  if ((rows[0] as { n: number }).n === tables.triggerNames.length) return false;
  for (const name of tables.triggerNames) await trx.raw(`drop trigger if exists "${name}" on ${source.table}`);
  await trx.raw(
    `create trigger ${tables.triggers.insert} after insert on ${source.table}
     referencing new table as added for each statement execute function ${tables.functions.insert}()`,
  );
  await trx.raw(
    `create trigger ${tables.triggers.delete} after delete on ${source.table}
     referencing old table as removed for each statement execute function ${tables.functions.delete}()`,
  );
  await trx.raw(
    `create trigger ${tables.triggers.update} after update on ${source.table}
     referencing old table as before_rows new table as after_rows for each statement execute function ${tables.functions.update}()`,
  );
  return true;
}
