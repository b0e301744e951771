import type BetterSqlite3 from 'better-sqlite3';
import { keysExpression, removeDocStatements, type SqliteLexicalTables } from './lexical-tables.js';
import { indexedText } from './lexical-text-form.js';

/**
 * Most queued rows indexed per transaction. FTS5 writes a new segment at
 * every commit, so indexing a few hundred rows at once costs about half as
 * much per row as indexing each row in its own write transaction.
 */
export const LEXICAL_FLUSH_BATCH = 256;

/**
 * Most text (UTF-16 code units) one batch indexes, past its first row. FTS5
 * tokenizes about 3 ms of a 32 KB memory of random words on this machine
 * (256 of them took 0.73 s in one transaction), and the flush runs on the
 * event loop: 64 Ki characters keeps a batch to a few milliseconds however
 * large the queued texts are (#11), while a batch of short memories still
 * fills all {@link LEXICAL_FLUSH_BATCH} rows.
 */
export const LEXICAL_FLUSH_CHARS = 64 * 1024;

/** What one batch did. */
export interface LexicalBatch {
  /** Queued keys it handled (indexed, or dropped from the queue when their row is gone). */
  handled: number;
  /** Whether it stopped at {@link LEXICAL_FLUSH_BATCH} rows or {@link LEXICAL_FLUSH_CHARS} characters, so more may be queued. */
  full: boolean;
}

/** Indexes queued rows of one lexical index, on one connection. */
export interface LexicalQueue {
  /** Up to `limit` queued keys, in key order (a snapshot: rows queued later are not in it). */
  queuedKeys(limit?: number): string[];
  /**
   * Indexes a prefix of `keys` in one immediate transaction, in order, within
   * the batch bounds: each key still queued gets its doc replaced by one made
   * from the source row as it is now (none when the row is gone or no longer
   * selected) and leaves the queue; keys no longer queued are skipped. Never
   * takes the write lock for an empty `keys`. The text is indexed in NFKC
   * ({@link indexedText}), the form of a query's words.
   * @returns how many of `keys`, from the front, were handled.
   */
  flushKeys(keys: readonly string[]): number;
  /** {@link flushKeys} on the first {@link LEXICAL_FLUSH_BATCH} queued keys. */
  flushBatch(): LexicalBatch;
}

/**
 * The queue flush of `tables` on `db` (statements prepared once here).
 * @throws the driver's error when SQLite fails (e.g. the tables are missing).
 */
export function lexicalQueueOn(db: BetterSqlite3.Database, tables: SqliteLexicalTables): LexicalQueue {
  const { source } = tables;
  const queuedKeys = db.prepare(`select id from ${tables.queue} order by id limit ?`).pluck();
  const queuedRow = db.prepare(
    `select s.${source.text} as text, case when s.${source.key} is null then null else ${keysExpression(tables, 's')} end as keys
     from ${tables.queue} q left join ${source.table} s on s.${source.key} = q.id and ${source.only('s')}
     where q.id = ?`,
  );
  const [removeText, removeDoc] = removeDocStatements(tables, '?').map((statement) => db.prepare(statement)) as [
    BetterSqlite3.Statement,
    BetterSqlite3.Statement,
  ];
  const insertDoc = db.prepare(`insert into ${tables.docs} (id, keys) values (?, ?)`);
  const insertText = db.prepare(`insert into ${tables.fts} (rowid, text) values (?, ?)`);
  const dequeue = db.prepare(`delete from ${tables.queue} where id = ?`);
  const flushInTransaction = db.transaction((keys: readonly string[]) => {
    let handled = 0;
    let indexed = 0;
    let chars = 0;
    for (const key of keys) {
      if (indexed === LEXICAL_FLUSH_BATCH || chars >= LEXICAL_FLUSH_CHARS) break;
      handled += 1;
      const row = queuedRow.get(key) as { text: string | null; keys: string | null } | undefined;
      if (row === undefined) continue;
      removeText.run(key);
      removeDoc.run(key);
      if (row.text !== null && row.keys !== null) {
        const text = indexedText(row.text);
        insertText.run(insertDoc.run(key, row.keys).lastInsertRowid, text);
        chars += text.length;
      }
      indexed += 1;
      dequeue.run(key);
    }
    return handled;
  });
  const flushKeys = (keys: readonly string[]) => (keys.length === 0 ? 0 : flushInTransaction.immediate(keys));
  return {
    queuedKeys: (limit = Number.MAX_SAFE_INTEGER) => queuedKeys.all(limit) as string[],
    flushKeys,
    flushBatch() {
      const keys = queuedKeys.all(LEXICAL_FLUSH_BATCH) as string[];
      const handled = flushKeys(keys);
      return { handled, full: handled < keys.length || keys.length === LEXICAL_FLUSH_BATCH };
    },
  };
}
