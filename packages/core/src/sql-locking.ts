import type { Knex } from 'knex';

/**
 * `query` with a row lock (`SELECT … FOR UPDATE`) where several processes
 * share the database (`capabilities.multiProcess`, PostgreSQL); SQLite
 * serialises writers itself and has no row locks.
 */
export function lockedWhen<Q extends Knex.QueryBuilder>(query: Q, lock: boolean): Q {
  return lock ? (query.forUpdate() as Q) : query;
}
