import type { SqlDatabase } from '@agentinfra/core';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { z } from 'zod';
import { connectionLocation } from './connection-location.js';
import { createPgLexicalIndex } from './lexical-index.js';
import { disposeOnReadTimeout } from './read-timeout.js';
import { createPgVectorIndex } from './vector-index.js';

/** Levels of the messages knex itself logs (its `log` option). */
export type ClientLogLevel = 'debug' | 'warn' | 'error';

/** Options of {@link createPostgresDatabase}. */
export const postgresDatabaseOptions = z.object({
  /** libpq connection URL, `postgres://user:password@host:port/database` (`postgresql://` too). */
  url: z.url({ protocol: /^postgres(ql)?$/, error: 'url must be a postgres:// or postgresql:// URL' }),
  /**
   * Schema the tables live in, created at first use; `search_path` becomes
   * `schema, public` so extensions installed in `public` (pgvector) stay reachable.
   * Absent: the server's default search path (normally `public`).
   */
  schema: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'schema must be a plain identifier of at most 63 characters')
    .optional(),
  /** Most connections the pool opens. */
  poolMax: z.number().int().min(1).default(10),
  /**
   * Server-side `statement_timeout` of every connection, in milliseconds; 0 keeps the server's default (normally none).
   * The client also stops waiting 5 s after it, for a server that no longer answers at all.
   */
  statementTimeoutMs: z.number().int().min(0).default(30_000),
  /** Receives each server NOTICE/WARNING as one line `SEVERITY: message`. Absent: notices are dropped. */
  onNotice: z.custom<(line: string) => void>((value) => typeof value === 'function').optional(),
  /**
   * Receives knex's own messages (such as `Acquire connection error: …` while
   * the server is unreachable) with their level, instead of knex writing them
   * to the console, without the stack frames knex appends to some. Absent:
   * knex's default console output.
   */
  onClientLog: z.custom<(level: ClientLogLevel, message: string) => void>((value) => typeof value === 'function').optional(),
});
export type PostgresDatabaseOptions = z.input<typeof postgresDatabaseOptions>;

/** How much longer (ms) than `statement_timeout` the client waits for an answer before it gives up on its own. */
const CLIENT_TIMEOUT_MARGIN_MS = 5_000;
/** How long (ms) opening a connection may take. */
const CONNECT_TIMEOUT_MS = 10_000;

/** SQLSTATE `unique_violation` (PostgreSQL Appendix A, class 23). */
const UNIQUE_VIOLATION = '23505';
/** SQLSTATE `duplicate_schema`: a concurrent `CREATE SCHEMA IF NOT EXISTS` won the race. */
const DUPLICATE_SCHEMA = '42P06';
/** OID of `int8` (`bigint`, `bigserial`, `count(*)`) in `pg_type`. */
const INT8_OID = 20;

/**
 * Type parsers of this adapter's connections: `int8` becomes a JavaScript
 * number (values beyond ±2^53−1 lose precision; timestamps in milliseconds and
 * row counts stay far below), everything else keeps pg's defaults (`numeric`
 * stays a string). Passed per connection, so pg's global parsers are untouched.
 */
function connectionTypes(): Knex.PgCustomTypesConfig {
  const parseInt8 = (value: string) => Number(value);
  return {
    getTypeParser: (oid: number, format: string) =>
      oid === INT8_OID && format === 'text' ? parseInt8 : pg.types.getTypeParser(oid, format === 'binary' ? 'binary' : 'text'),
  };
}

/** The pg connection knex hands to `pool.afterCreate`. */
type RawConnection = pg.Client;

/**
 * {@link SqlDatabase} on PostgreSQL (knex + pg) for several `serve`
 * processes sharing one database: capabilities `returning`, `skipLocked`
 * and `multiProcess`. Each pooled connection gets `statement_timeout`, the
 * `int8`-as-number parser and, with `schema`, `search_path = schema, public`.
 * Connections open lazily: creating the database does not touch the server.
 * @throws ZodError when options are invalid (the message never contains the URL).
 */
export function createPostgresDatabase(options: PostgresDatabaseOptions): SqlDatabase {
  const { url, schema, poolMax, statementTimeoutMs, onNotice, onClientLog } = postgresDatabaseOptions.parse(options);
  const location = `${connectionLocation(url)}${schema === undefined ? '' : `, schema ${schema}`}`;
  let schemaReady: Promise<void> | undefined;

  /** Creates `schema` once per instance; later connections wait for the first attempt. */
  function ensureSchema(connection: RawConnection): Promise<void> {
    if (schema === undefined) return Promise.resolve();
    schemaReady ??= connection.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`).then(
      () => undefined,
      (error: unknown) => {
        if (sqlState(error) === UNIQUE_VIOLATION || sqlState(error) === DUPLICATE_SCHEMA) return;
        schemaReady = undefined;
        throw new Error(`cannot create schema ${schema} on postgres (${connectionLocation(url)})`, { cause: error });
      },
    );
    return schemaReady;
  }

  const knex = knexFactory({
    client: 'pg',
    connection: {
      connectionString: url,
      statement_timeout: statementTimeoutMs,
      // The server enforces statement_timeout only while it can be reached: a server or network that stops answering
      // (no reset) would hold a query, a request and the job runner forever. The client gives up a little later instead
      // (and closes that connection, see disposeOnReadTimeout), a connection attempt after 10 s, and TCP keepalive
      // probes idle connections after 10 s.
      ...(statementTimeoutMs > 0 ? { query_timeout: statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS } : {}),
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      types: connectionTypes(),
    },
    ...(schema === undefined ? {} : { searchPath: [schema, 'public'] }),
    ...(onClientLog === undefined
      ? {}
      : {
          log: {
            debug: (message: unknown) => onClientLog('debug', withoutStackFrames(message)),
            warn: (message: unknown) => onClientLog('warn', withoutStackFrames(message)),
            deprecate: (message: unknown) => onClientLog('warn', withoutStackFrames(message)),
            error: (message: unknown) => onClientLog('error', withoutStackFrames(message)),
          },
        }),
    pool: {
      min: 0,
      max: poolMax,
      afterCreate(connection: RawConnection, done: (error: Error | null, connection: RawConnection) => void) {
        disposeOnReadTimeout(connection);
        if (onNotice !== undefined) {
          connection.on('notice', (notice) => onNotice(`${notice.severity ?? 'NOTICE'}: ${notice.message ?? ''}`));
        }
        ensureSchema(connection).then(
          () => done(null, connection),
          (error: Error) => done(error, connection),
        );
      },
    },
  });

  return {
    dialect: 'postgres',
    capabilities: { returning: true, skipLocked: true, multiProcess: true },
    knex,
    describe: () => `postgres (${location})`,
    async ping() {
      try {
        await knex.raw('select 1');
      } catch (error) {
        throw new Error(`postgres (${location}) did not answer: ${describeCause(error)}`, { cause: error });
      }
    },
    isUniqueViolation: (error: unknown) => sqlState(error) === UNIQUE_VIOLATION,
    vectorIndex: ({ table }) => createPgVectorIndex({ knex, table, ...(onNotice === undefined ? {} : { onNotice }) }),
    lexicalIndex: ({ table, source }) => createPgLexicalIndex({ knex, table, source }),
    async lockInTransaction(trx, key) {
      await trx.raw(`select pg_advisory_xact_lock(hashtextextended(current_schema() || ':' || ?, 0))`, [key]);
    },
    readSnapshot: (work) => knex.transaction(work, { isolationLevel: 'repeatable read', readOnly: true }),
    async exclusive(options, work) {
      const connection = (await knex.client.acquireConnection()) as RawConnection;
      const lockKey = [options.key];
      try {
        await connection.query(`select pg_advisory_lock(hashtext(current_schema() || ':' || $1))`, lockKey);
        try {
          return await work();
        } finally {
          await connection.query(`select pg_advisory_unlock(hashtext(current_schema() || ':' || $1))`, lockKey);
        }
      } finally {
        await knex.client.releaseConnection(connection);
      }
    },
    async close() {
      await knex.destroy();
    },
  };
}

/**
 * A knex log message without the stack trace it may carry (`Acquire
 * connection error: Error: connect ECONNREFUSED …` followed by `    at …`
 * frames): the frames are knex's and pg's internals, useless to an operator
 * and a dozen lines per failed connection attempt.
 */
function withoutStackFrames(message: unknown): string {
  return String(message)
    .split('\n')
    .filter((line) => !/^\s+at /.test(line))
    .join('\n');
}

/** The SQLSTATE of a pg error (`code`, five characters), or undefined for anything else. */
function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** One-line reason of a driver error: its code (SQLSTATE or `ECONNREFUSED`) and message, or the value itself. */
function describeCause(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const parts = [code, message].filter((part): part is string => typeof part === 'string' && part !== '');
  return parts.length > 0 ? parts.join(' ') : String(error);
}
