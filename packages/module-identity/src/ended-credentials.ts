import { SQL_ID_CHUNK, type SqlDatabase } from '@agentinfra/core';

/** Milliseconds in a day. */
export const DAY_MS = 86_400_000;
/** Revoked or expired credentials are kept this long (so revoking twice still answers) before the sweep deletes them. */
export const RETAIN_ENDED_MS = 7 * DAY_MS;

/** The `sql` port's knex, or a transaction of it. */
type Queryable = SqlDatabase['knex'] | Parameters<SqlDatabase['lockInTransaction']>[0];

/** When a delegation ended: its revocation, or its expiry when that came first. */
const ENDED_AT = 'case when revoked_at is not null and revoked_at < expires_at then revoked_at else expires_at end';

/**
 * Deletes the rows of `table` (`identity_devices` or `identity_delegations`)
 * that expired or were revoked before `cutoff` (ms since the epoch), at most
 * {@link SQL_ID_CHUNK} per statement, each statement committed on its own,
 * so that no sweep holds the table's write lock for long however many rows
 * are due. An ended row never becomes live again, so a batch deletes its
 * ids without checking them again. Stops before the next batch once
 * `signal` aborts.
 * @returns how many rows were deleted.
 * @throws `signal`'s reason when it aborted (the batches before stay deleted).
 */
export async function deleteEndedBefore(options: {
  knex: SqlDatabase['knex'];
  table: 'identity_devices' | 'identity_delegations';
  idColumn: 'device_id' | 'delegation_id';
  cutoff: number;
  signal?: AbortSignal;
}): Promise<number> {
  const { knex, table, idColumn, cutoff } = options;
  let deleted = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const rows = (await knex(table)
      .select(idColumn)
      .where('expires_at', '<', cutoff)
      .orWhere('revoked_at', '<', cutoff)
      .limit(SQL_ID_CHUNK)) as Array<Record<string, string>>;
    const ids = rows.map((row) => row[idColumn] as string);
    if (ids.length === 0) return deleted;
    deleted += await knex(table).whereIn(idColumn, ids).delete();
    if (ids.length < SQL_ID_CHUNK) return deleted;
  }
}

/**
 * Inside the transaction that stores a new delegation from `agentId` (under
 * its delegations lock): deletes that agent's ended (revoked or expired at
 * `now`) delegations beyond the newest `keep` by end time, at most
 * {@link SQL_ID_CHUNK} of them. Ended delegations are otherwise kept
 * {@link RETAIN_ENDED_MS}; without this an agent creating and revoking
 * delegations in a loop would grow the table without bound within that
 * week. An ended delegation has no live descendant (revoking ends them all,
 * and none outlives its parent), so removing it never hides one from a
 * later revocation.
 * @param keep ended delegations kept per agent (the live quota, setting `identity_max_live_delegations_per_agent`).
 * @returns how many were deleted.
 */
export async function pruneEndedDelegations(options: { trx: Queryable; agentId: string; now: number; keep: number }): Promise<number> {
  const { trx, agentId, now, keep } = options;
  const rows = (await trx('identity_delegations')
    .select('delegation_id')
    .where({ from_agent: agentId })
    .andWhere((ended) => ended.whereNotNull('revoked_at').orWhere('expires_at', '<=', now))
    .orderByRaw(`${ENDED_AT} desc, delegation_id desc`)
    .limit(SQL_ID_CHUNK)
    .offset(keep)) as Array<{ delegation_id: string }>;
  if (rows.length === 0) return 0;
  return trx('identity_delegations')
    .whereIn(
      'delegation_id',
      rows.map((row) => row.delegation_id),
    )
    .delete();
}
