import type pg from 'pg';

/** The message of pg's client-side `query_timeout` error. */
const READ_TIMEOUT = 'Query read timeout';

type QueryFunction = (...args: unknown[]) => unknown;

/**
 * Closes a pooled connection as soon as pg gives up on one of its queries
 * (`query_timeout`, "Query read timeout"). pg only fails the caller's query:
 * the statement is still in flight on that connection and whatever was queued
 * behind it is dropped unsent, so the next user of the connection would run
 * in a session it does not know (a transaction whose ROLLBACK never went out,
 * where a later INSERT answers but never commits). Destroying the socket
 * ends the session, so the server rolls its transaction back once it sees the
 * close; the connection is marked disposed for knex (its own flag, which its
 * `end` handler would set only later) so the pool discards it on release.
 * Applies to callback-style queries, which is how knex runs every query.
 */
export function disposeOnReadTimeout(connection: pg.Client): void {
  const client = connection as unknown as {
    query: QueryFunction;
    connection?: { stream?: { destroy(): void } };
    /** knex's mark of a connection its pool must discard instead of handing out again (set here before knex releases it). */
    __knex__disposed?: unknown;
  };
  const query = client.query.bind(connection) as QueryFunction;
  client.query = (...args: unknown[]) => {
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      args[args.length - 1] = (error: Error | null, result: unknown) => {
        if (error?.message === READ_TIMEOUT) {
          client.__knex__disposed = error;
          client.connection?.stream?.destroy();
        }
        (callback as (error: Error | null, result: unknown) => void)(error, result);
      };
    }
    return query(...args);
  };
}
