import type BetterSqlite3 from 'better-sqlite3';
import { keysExpression, removeDocStatements, type SqliteLexicalTables } from './lexical-tables.js';

/**
 * Queued rows indexed per transaction. FTS5 writes a new segment at every
 * commit, so indexing a few hundred rows at once costs about half as much per
 * row as indexing each row in its own write transaction; a batch stays a few
 * milliseconds long.
 */
export const LEXICAL_FLUSH_BATCH = 256;

/** Indexes queued rows of one lexical index, on one connection. */
export interface LexicalQueue {
  /**
   * Indexes up to {@link LEXICAL_FLUSH_BATCH} queued rows in one immediate
   * transaction: each queued key's doc is replaced by one made from the
   * source row as it is now (none when the row is gone or no longer
   * selected), and the key leaves the queue.
   * @returns rows taken from the queue (0 when it was empty).
   */
  flushBatch(): number;
  /** Flushes batches until the queue is empty. @returns rows taken. */
  drain(): number;
}

/**
 * The queue flush of `tables` on `db` (statements prepared once here).
 * @throws the driver's error when SQLite fails (e.g. the tables are missing).
 */
export function lexicalQueueOn(db: BetterSqlite3.Database, tables: SqliteLexicalTables): LexicalQueue {
  const { source } = tables;
  const queued = db.prepare(
    `select q.id as id, s.${source.text} as text, case when s.${source.key} is null then null else ${keysExpression(tables, 's')} end as keys
     from ${tables.queue} q left join ${source.table} s on s.${source.key} = q.id and ${source.only('s')}
     order by q.id limit ${LEXICAL_FLUSH_BATCH}`,
  );
  const [removeText, removeDoc] = removeDocStatements(tables, '?').map((statement) => db.prepare(statement)) as [
    BetterSqlite3.Statement,
    BetterSqlite3.Statement,
  ];
  const insertDoc = db.prepare(`insert into ${tables.docs} (id, keys) values (?, ?)`);
  const insertText = db.prepare(`insert into ${tables.fts} (rowid, text) values (?, ?)`);
  // The batch is the queue's first keys in key order, and nothing else writes while the transaction holds the lock.
  const dequeueThrough = db.prepare(`delete from ${tables.queue} where id <= ?`);
  const anyQueued = db.prepare(`select 1 from ${tables.queue} limit 1`);
  const flushBatch = db.transaction(() => {
    const rows = queued.all() as Array<{ id: string; text: string | null; keys: string | null }>;
    for (const row of rows) {
      removeText.run(row.id);
      removeDoc.run(row.id);
      if (row.text !== null && row.keys !== null) insertText.run(insertDoc.run(row.id, row.keys).lastInsertRowid, row.text);
    }
    const last = rows.at(-1);
    if (last !== undefined) dequeueThrough.run(last.id);
    return rows.length;
  });
  // An empty queue (every query's case once the background flush caught up) takes no write lock.
  const flushIfQueued = () => (anyQueued.get() === undefined ? 0 : flushBatch.immediate());
  return {
    flushBatch: flushIfQueued,
    drain() {
      let taken = 0;
      for (let walked = flushIfQueued(); walked > 0; walked = flushIfQueued()) taken += walked;
      return taken;
    },
  };
}
