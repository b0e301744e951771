import { assertWithinQuota, type SqlDatabase } from '@agentinfra/core';

/** A transaction of the `sql` port's knex (the type its `lockInTransaction` takes). */
type Transaction = Parameters<SqlDatabase['lockInTransaction']>[0];

const countOf = (row: unknown) => Number((row as { n: number | string } | undefined)?.n ?? 0);

/**
 * Inside `trx`, before storing a secret: takes the agent's secrets lock (so
 * concurrent puts of new keys cannot pass the quota together) and, unless
 * the agent already holds `key` (a put that replaces takes no room), counts
 * its secrets.
 * @param quota setting `identity_max_secrets_per_agent`, read before the transaction.
 * @throws ConflictError (409, details `{ quota, used }`) for a new key when the agent holds `quota` secrets.
 */
export async function assertRoomForSecret(options: {
  sql: SqlDatabase;
  trx: Transaction;
  agentId: string;
  key: string;
  quota: number;
}): Promise<void> {
  const { sql, trx, agentId, key, quota } = options;
  await sql.lockInTransaction(trx, `identity:secrets:${agentId}`);
  if (await trx('identity_secrets').select('key').where({ agent_id: agentId, key }).first()) return;
  const held = await trx('identity_secrets').where({ agent_id: agentId }).count({ n: '*' }).first();
  assertWithinQuota({
    agentId,
    used: countOf(held),
    quota,
    what: 'secrets',
    setting: 'identity_max_secrets_per_agent',
    release: 'delete one with /secrets/delete first',
  });
}

/**
 * Inside `trx`, before storing a delegation from `agentId`: takes the
 * agent's delegations lock (so concurrent /delegate calls cannot pass the
 * quota together) and counts its live delegations (not revoked, expiring
 * after `now`), those made with its delegation tokens included.
 * @param now the new delegation's creation time (ms since the epoch).
 * @param quota setting `identity_max_live_delegations_per_agent`, read before the transaction.
 * @throws ConflictError (409, details `{ quota, used }`) when the agent has `quota` live delegations.
 */
export async function assertRoomForDelegation(options: {
  sql: SqlDatabase;
  trx: Transaction;
  agentId: string;
  now: number;
  quota: number;
}): Promise<void> {
  const { sql, trx, agentId, now, quota } = options;
  await sql.lockInTransaction(trx, `identity:delegations:${agentId}`);
  const live = await trx('identity_delegations')
    .where({ from_agent: agentId })
    .whereNull('revoked_at')
    .andWhere('expires_at', '>', now)
    .count({ n: '*' })
    .first();
  assertWithinQuota({
    agentId,
    used: countOf(live),
    quota,
    what: 'live delegations',
    setting: 'identity_max_live_delegations_per_agent',
    release: 'revoke one with /delegate/revoke first, or wait for one to expire',
  });
}
