import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';

/**
 * Runs `work` on a connection leased from `knex`'s pool (the adapter's pool
 * holds one, so no knex query or transaction runs meanwhile) and gives it
 * back. `work` is synchronous: it runs better-sqlite3 statements straight on
 * the connection (prepared once per SQL text by the adapter's statement
 * cache), without knex's per-query promise and pool machinery, which costs
 * more than a simple statement does. Never call it from inside a knex
 * transaction on the same pool: the lease would wait for that transaction's
 * connection forever.
 * @returns what `work` returns.
 * @throws what `work` or the pool throws.
 */
export async function withConnection<T>(knex: Knex, work: (connection: BetterSqlite3.Database) => T): Promise<T> {
  const connection = (await knex.client.acquireConnection()) as BetterSqlite3.Database;
  try {
    return work(connection);
  } finally {
    await knex.client.releaseConnection(connection);
  }
}
