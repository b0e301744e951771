import type { Knex } from 'knex';
import type { PgLexicalTables } from './lexical-tables.js';

/** The Unicode normal form the index stores text in, recorded as `text_form` in `<p>_meta`. */
const TEXT_FORM = 'NFKC';

/**
 * SQL of `textSql` in the form the index stores it: Unicode NFKC, the form
 * `lexicalTerms` reads a query in, so a memory stored as "ＩＮＶ８８２３１",
 * "ﬁnancial", "①②③" or "resume" + U+0301 is found by the same string typed as
 * a query. PostgreSQL's `normalize()` works only when the server encoding is
 * UTF8 (it raises an error otherwise); under another encoding the text is
 * taken as written.
 */
export function indexedTextExpression(textSql: string): string {
  return `(case when current_setting('server_encoding') = 'UTF8' then normalize(${textSql}, ${TEXT_FORM}) else ${textSql} end)`;
}

/**
 * Records the text form in `<p>_meta`, inside `trx`. An index built before
 * its text was stored in {@link TEXT_FORM} (no `text_form`) loses its `state`
 * and `cursor`, so `ensure` walks every source row again and the backfill
 * replaces the docs that differ: rows written before the upgrade are found as
 * new ones are. Meanwhile the old docs keep answering.
 */
export async function recordTextForm(trx: Knex.Transaction, tables: PgLexicalTables): Promise<void> {
  const { rows } = await trx.raw(`select value from ${tables.meta} where key = 'text_form'`);
  if ((rows[0] as { value: string } | undefined)?.value === TEXT_FORM) return;
  await trx.raw(`delete from ${tables.meta} where key in ('state', 'cursor')`);
  await trx.raw(`insert into ${tables.meta} (key, value) values ('text_form', ?) on conflict (key) do update set value = excluded.value`, [
    TEXT_FORM,
  ]);
}
