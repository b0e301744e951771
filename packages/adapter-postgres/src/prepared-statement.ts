import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type pg from 'pg';

/** Statement names by SQL text (PostgreSQL names are at most 63 bytes; the text's hash fits). */
const names = new Map<string, string>();

/** The prepared-statement name of `text`: `agentinfra_` + 40 hex digits of its SHA-1, the same in every process. */
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `agentinfra_${createHash('sha1').update(text).digest('hex')}`;
    names.set(text, name);
  }
  return name;
}

/** Runs `query` through node-postgres on a connection of `knex`'s pool, which goes back to the pool either way. */
async function queryOnPoolConnection<Row>(knex: Knex, query: pg.QueryConfig): Promise<Row[]> {
  const connection = (await knex.client.acquireConnection()) as pg.Client;
  try {
    return (await connection.query(query)).rows as Row[];
  } finally {
    await knex.client.releaseConnection(connection);
  }
}

/**
 * Runs `text` (with `$1 … $n` placeholders) as a named prepared statement
 * on a connection of `knex`'s pool, straight through node-postgres: each
 * connection parses and plans the statement once (PostgreSQL re-plans it by
 * itself after a schema change), and the call skips knex's query building.
 * For the hottest statements only (the vector search): a connection pooler
 * in front of PostgreSQL must keep prepared statements per client session
 * (PgBouncer: session pooling, or 1.21+ with `max_prepared_statements`).
 * Buffer values are sent in binary format, everything else as text.
 * @returns the result rows.
 * @throws the driver's error (the connection goes back to the pool either way).
 */
export function queryPrepared<Row>(knex: Knex, text: string, values: readonly unknown[]): Promise<Row[]> {
  return queryOnPoolConnection<Row>(knex, { name: statementName(text), text, values: [...values] });
}

/**
 * Runs `text` (with `$1 … $n` placeholders) as an unnamed statement on a
 * connection of `knex`'s pool, straight through node-postgres: PostgreSQL
 * plans it for these values every time. For statements whose best plan
 * depends on the values: after five runs of a named statement PostgreSQL may
 * switch to a generic plan, and for a full-text match that plan reads every
 * row (a lexical query at 100k rows went from ~3 to ~18 ms that way,
 * bench/memory-pg.ts).
 * @returns the result rows.
 * @throws the driver's error (the connection goes back to the pool either way).
 */
export function queryPlannedEachTime<Row>(knex: Knex, text: string, values: readonly unknown[]): Promise<Row[]> {
  return queryOnPoolConnection<Row>(knex, { text, values: [...values] });
}
