import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteLexicalTables } from './lexical-tables.js';

/** The Unicode normal form the index stores text in, recorded as `text_form` in `<p>_meta`. */
const TEXT_FORM = 'NFKC';

/**
 * `text` as the index tokenizes it: in Unicode NFKC, the form `lexicalTerms`
 * reads a query in, so a memory stored as "ＩＮＶ８８２３１", "ﬁnancial" or
 * "①②③" is found by the same string typed as a query (FTS5's `unicode61`
 * folds case and diacritics, not compatibility characters).
 */
export function indexedText(text: string): string {
  return text.normalize(TEXT_FORM);
}

/**
 * Records the text form in `<p>_meta`, in the caller's transaction. An index
 * built before its text was stored in {@link TEXT_FORM} (no `text_form`) loses
 * its `state` and `cursor`, so `ensure` walks every source row again and the
 * backfill re-indexes those whose text NFKC changes: rows written before the
 * upgrade are found as new ones are. Meanwhile the old index keeps answering.
 */
export function recordTextForm(db: BetterSqlite3.Database, tables: SqliteLexicalTables): void {
  const held = db.prepare(`select value from ${tables.meta} where key = 'text_form'`).pluck().get() as string | undefined;
  if (held === TEXT_FORM) return;
  db.prepare(`delete from ${tables.meta} where key in ('state', 'cursor')`).run();
  db.prepare(`insert or replace into ${tables.meta} (key, value) values ('text_form', ?)`).run(TEXT_FORM);
}
