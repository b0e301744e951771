import type { Knex } from 'knex';
import type { LexicalIndex, LexicalSource } from './lexical-index.js';
import type { VectorIndex } from './vector-index.js';

/** What a SQL adapter can do; contract suites and modules branch on these, never on adapter names. */
export interface SqlCapabilities {
  /** `INSERT/UPDATE … RETURNING` works. */
  returning: boolean;
  /** `SELECT … FOR UPDATE SKIP LOCKED` works (several processes can claim rows safely). */
  skipLocked: boolean;
  /** Several processes may share this database (PostgreSQL yes, a SQLite file no). */
  multiProcess: boolean;
}

/**
 * A relational database reached through knex (SQLite or PostgreSQL).
 *
 * Conventions every adapter guarantees (checked by `runSqlDatabaseContract`):
 * - `bigInteger` columns round-trip as JavaScript numbers (timestamps are
 *   stored as milliseconds since the epoch in `bigInteger` columns);
 * - `text` columns hold JSON written with `JSON.stringify`;
 * - a unique-constraint violation is recognised by {@link SqlDatabase.isUniqueViolation}.
 */
export interface SqlDatabase {
  /** `sqlite` or `postgres`. For logs and dialect-specific SQL inside adapters. */
  readonly dialect: 'sqlite' | 'postgres';
  readonly capabilities: SqlCapabilities;
  /** The knex instance; modules build their queries and migrations with it. */
  readonly knex: Knex;
  /** Human-readable location without credentials, e.g. `sqlite (.agentinfra/agentinfra.db)`. */
  describe(): string;
  /** Resolves when a trivial query succeeds. @throws the driver error otherwise. */
  ping(): Promise<void>;
  /** Whether `error` (as thrown by knex) is a unique-constraint violation. */
  isUniqueViolation(error: unknown): boolean;
  /**
   * A vector index stored in this database under table name prefix `table`
   * (e.g. `memory_vectors`). Each call with the same name addresses the same data.
   */
  vectorIndex(options: { table: string }): VectorIndex;
  /**
   * A full-text index stored in this database under table name prefix
   * `table` (e.g. `memory_lexical`) that follows `source`'s rows by itself.
   * Each call with the same name addresses the same data.
   */
  lexicalIndex(options: { table: string; source: LexicalSource }): LexicalIndex;
  /**
   * Runs `work` while holding a database-wide lock named `key`, so that only
   * one process (and one caller in this process) runs it at a time — e.g.
   * migrations started by several replicas at once. PostgreSQL: a session
   * advisory lock (`pg_advisory_lock`) scoped to the schema, held on a
   * dedicated connection; SQLite: a queue in this process, then an exclusive
   * lock on a side file named after the key and its hash,
   * `<database>.<key>-<hash>.lock` (another process waits for it), for a
   * file on disk.
   * @returns what `work` returns; the lock is released when it settles.
   */
  exclusive<T>(options: { key: string }, work: () => Promise<T>): Promise<T>;
  /**
   * Holds the lock named `key` until `trx` commits or rolls back, so that
   * transactions taking the same key run their check-then-write one after
   * another — e.g. a per-agent quota: count the agent's rows, then insert,
   * with no other creator in between (in any process). PostgreSQL: a
   * transaction-scoped advisory lock (`pg_advisory_xact_lock`) on the key
   * within the schema; SQLite: nothing more to do, a transaction holds the
   * file's one connection until it ends.
   */
  lockInTransaction(trx: Knex.Transaction, key: string): Promise<void>;
  /**
   * Runs `work` in a read-only transaction in which every read sees the
   * database as of one moment, whatever other transactions commit
   * meanwhile — e.g. rows of several tables that must agree with each
   * other (a configuration rendered from peers, rules and keys).
   * A write in it fails. PostgreSQL: `REPEATABLE READ READ ONLY` (one
   * snapshot for the whole transaction); SQLite: a deferred transaction
   * under `PRAGMA query_only` (it holds the file's one connection until it
   * ends, so no write of this process runs meanwhile; its first read fixes
   * the snapshot against other processes).
   * @returns what `work` returns, after the transaction ended.
   * @throws what `work` throws (the transaction is rolled back).
   */
  readSnapshot<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /** Closes the pool. Further calls fail. */
  close(): Promise<void>;
}
