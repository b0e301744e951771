import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SqlDatabase } from '@agentinfra/core';
import type BetterSqlite3 from 'better-sqlite3';
import knexFactory from 'knex';
import { z } from 'zod';
import { withConnection } from './connection-lease.js';
import { lockFileOf, withFileLock } from './file-lock.js';
import { createSqliteLexicalIndex, type SqliteLexicalIndex } from './lexical-index.js';
import { createSqliteVectorIndex, loadSqliteVectorExtension } from './vector-index.js';
import { startWalCheckpointer, truncateWal, truncateWhenLarge, WAL_SIZE_LIMIT_BYTES, type WalCheckpointer } from './wal-checkpointer.js';

/**
 * Milliseconds after the connection opens before the WAL checkpoint thread
 * starts (until then SQLite's automatic checkpoint runs): a command that
 * opens the database for a moment (`agentinfra agents create`, `migrate`)
 * closes it before and does not pay ~0.3 s for a thread it never needs.
 */
export const WAL_CHECKPOINTER_DELAY_MS = 1_000;

/** Distinct SQL texts whose compiled statements each connection keeps. */
const STATEMENT_CACHE_SIZE = 512;

/**
 * knex compiles every query anew (`connection.prepare(sql)` per call), which
 * costs as much as running a simple statement. Keep compiled statements per
 * SQL text instead, least recently used out first. Safe because knex runs
 * each statement to completion synchronously (no open iterators), and
 * SQLite re-prepares a cached statement by itself after a schema change.
 */
function cachePreparedStatements(connection: BetterSqlite3.Database, size: number): void {
  const prepare = connection.prepare.bind(connection);
  const cache = new Map<string, BetterSqlite3.Statement>();
  connection.prepare = ((source: string) => {
    const cached = cache.get(source);
    if (cached) {
      cache.delete(source);
      cache.set(source, cached);
      return cached;
    }
    const statement = prepare(source);
    cache.set(source, statement);
    if (cache.size > size) cache.delete(cache.keys().next().value as string);
    return statement;
  }) as typeof connection.prepare;
}

/** Options of {@link createSqliteDatabase}. */
export const sqliteDatabaseOptions = z.object({
  /** Path of the database file; its folder is created when missing. `:memory:` for a throw-away database. */
  filename: z.string().min(1),
  /** Milliseconds a writer waits for the file lock before failing with SQLITE_BUSY. */
  busyTimeoutMs: z.number().int().min(0).default(5_000),
});
export type SqliteDatabaseOptions = z.input<typeof sqliteDatabaseOptions>;

/**
 * The embedded default {@link SqlDatabase}: knex on better-sqlite3, one file,
 * WAL journal, foreign keys on, `synchronous = NORMAL` (durable across process
 * crashes; the last transactions may be lost only on power failure). The WAL
 * is checkpointed by a worker thread ({@link startWalCheckpointer}, from
 * {@link WAL_CHECKPOINTER_DELAY_MS} after the connection opened), not in
 * the commits of the event loop, and kept to about
 * {@link WAL_SIZE_LIMIT_BYTES} (`journal_size_limit`, and a TRUNCATE
 * checkpoint on this connection between transactions when the thread finds
 * the WAL larger); should that thread fail, the connection goes back to
 * SQLite's automatic checkpoint.
 * @throws ZodError when options are invalid.
 */
export function createSqliteDatabase(options: SqliteDatabaseOptions): SqlDatabase {
  const { filename, busyTimeoutMs } = sqliteDatabaseOptions.parse(options);
  const onDisk = filename !== ':memory:';
  if (onDisk) mkdirSync(dirname(filename), { recursive: true });
  let checkpointer: WalCheckpointer | undefined;
  let checkpointerStart: NodeJS.Timeout | undefined;
  const knex = knexFactory({
    client: 'better-sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate(connection: BetterSqlite3.Database, done: (error: Error | null, connection: unknown) => void) {
        try {
          connection.pragma('journal_mode = WAL');
          connection.pragma('synchronous = NORMAL');
          // A writer that restarts the WAL cuts the file back to this at its first commit, so one burst does not keep it large.
          connection.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
          connection.pragma('foreign_keys = ON');
          connection.pragma(`busy_timeout = ${busyTimeoutMs}`);
          if (onDisk && checkpointerStart === undefined) {
            checkpointerStart = setTimeout(() => {
              if (!connection.open) return;
              connection.pragma('wal_autocheckpoint = 0');
              checkpointer = startWalCheckpointer({
                filename,
                // Leased from the pool: the truncation runs between two queries or transactions of this connection.
                onLarge: truncateWhenLarge(() => withConnection(knex, (leased) => truncateWal(leased, busyTimeoutMs))),
                onFailure: () => {
                  if (connection.open) connection.pragma('wal_autocheckpoint = 1000');
                },
              });
            }, WAL_CHECKPOINTER_DELAY_MS);
            checkpointerStart.unref();
          }
          loadSqliteVectorExtension(connection);
          cachePreparedStatements(connection, STATEMENT_CACHE_SIZE);
          done(null, connection);
        } catch (error) {
          done(error as Error, connection);
        }
      },
    },
  });
  /** Tail of each key's queue of `exclusive` callers. */
  const exclusiveQueues = new Map<string, Promise<void>>();
  /** Lexical indexes made here, whose background flush stops when the database closes. */
  const lexicalIndexes = new Set<SqliteLexicalIndex>();
  return {
    dialect: 'sqlite',
    capabilities: { returning: true, skipLocked: false, multiProcess: false },
    knex,
    describe: () => `sqlite (${filename})`,
    async ping() {
      await knex.raw('select 1');
    },
    isUniqueViolation(error: unknown) {
      const code = (error as { code?: unknown } | null)?.code;
      return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
    },
    vectorIndex: ({ table }) => createSqliteVectorIndex({ knex, table }),
    lexicalIndex({ table, source }) {
      const index = createSqliteLexicalIndex({ knex, table, source });
      lexicalIndexes.add(index);
      return index;
    },
    async lockInTransaction() {},
    readSnapshot: (work) =>
      knex.transaction(async (trx) => {
        // The transaction holds the file's one connection: read-only for as long as it lasts, as on PostgreSQL.
        await trx.raw('PRAGMA query_only = ON');
        try {
          return await work(trx);
        } finally {
          await trx.raw('PRAGMA query_only = OFF');
        }
      }),
    exclusive(options, work) {
      const previous = exclusiveQueues.get(options.key) ?? Promise.resolve();
      const held = onDisk ? () => withFileLock(lockFileOf(filename, options.key), work) : work;
      const result = previous.then(held, held);
      const settled = result.then(
        () => undefined,
        () => undefined,
      );
      exclusiveQueues.set(options.key, settled);
      return result;
    },
    async close() {
      for (const index of lexicalIndexes) index.close();
      clearTimeout(checkpointerStart);
      await checkpointer?.close();
      await knex.destroy();
    },
  };
}
