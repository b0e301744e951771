import { chunks, lockedWhen, SQL_ID_CHUNK, type SqlDatabase } from '@agentinfra/core';
import type { Knex } from 'knex';

/** Orders ids by UTF-16 code unit, as `COLLATE "C"` does. */
export const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The ids among `ids` that are memories of `agentId`, read in `trx` and, where
 * several processes share the database, locked (FOR UPDATE) until it ends.
 * Every transaction that writes memories it did not create takes their locks
 * here first, in code-unit order of their ids across all chunks (`COLLATE "C"`
 * in each): /set/put and /mem/forget of the same memories then wait for each
 * other instead of deadlocking (a forget that deleted row by row, in the
 * order PostgreSQL scanned them, met a set/put's member rows through the
 * cascade: `40P01`, a 503).
 * @param sql the database, for whether it is shared by several processes.
 * @returns the ids found.
 */
export async function lockOwnMemories(
  sql: SqlDatabase,
  trx: Knex.Transaction,
  agentId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const found = new Set<string>();
  const lock = sql.capabilities.multiProcess;
  for (const chunk of chunks([...ids].sort(byCodeUnit), SQL_ID_CHUNK)) {
    const query = trx('memory_records').select('id').where({ agent_id: agentId }).whereIn('id', chunk);
    const rows = (await lockedWhen(lock ? query.orderByRaw('id collate "C"') : query, lock)) as Array<{ id: string }>;
    for (const row of rows) found.add(row.id);
  }
  return found;
}
