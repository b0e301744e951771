import type { SqlDatabase } from '@agentinfra/core';
import type { Knex } from 'knex';

/**
 * Takes, until `trx` ends, the lock under which each of `agentIds` stores
 * messages, in sorted order so that two batches never wait for each other
 * crosswise. `seq` (the /list cursor) is drawn from a sequence at INSERT
 * time, but transactions commit in any order: two writers (replicas, or
 * batches in flight in one process) could commit an agent's seq 7 before
 * its seq 5, and a poller that read 7 would step past 5 for good. Under the
 * lock an agent's messages become visible in the order of their `seq`.
 * Taken right before the INSERT, so the wait is the length of another
 * batch's insert and commit. A no-op on SQLite (one writer at a time).
 */
export async function lockMessageOrder(sql: SqlDatabase, trx: Knex.Transaction, agentIds: Iterable<string>): Promise<void> {
  for (const agentId of [...new Set(agentIds)].sort()) await sql.lockInTransaction(trx, `postbox:messages:${agentId}`);
}
