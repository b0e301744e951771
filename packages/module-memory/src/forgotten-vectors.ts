import { drainRemovalQueue, queueRemovals, type VectorIndex } from '@agentinfra/core';
import type { Knex } from 'knex';

/** Ids of forgotten semantic memories whose vectors may still be in a vector index. */
const QUEUE = 'memory_vector_removals';

/** Queue entries one {@link removeQueuedVectors} call walks at most, in chunks of `SQL_ID_CHUNK`: the next call goes on. */
export const MAX_CHUNKS_PER_DRAIN = 20;

/**
 * Queues the vectors of `ids` (semantic memories being forgotten) for
 * removal, in `trx`, the transaction that deletes their records: the queue
 * commits exactly when the records are gone, so no crash or failure after
 * the commit can lose track of a vector left behind.
 */
export async function queueVectorRemovals(trx: Knex.Transaction, ids: readonly string[]): Promise<void> {
  await queueRemovals(trx, QUEUE, 'id', ids);
}

/**
 * Removes the vectors of queued memories from every index of `indexes`, then
 * their queue entries (`drainRemovalQueue` of core): those of `options.only`
 * (what a forget just queued), or else the queue in id order, at most
 * {@link MAX_CHUNKS_PER_DRAIN} chunks per call. Ids an index refuses stay
 * queued, reported to `options.onRefused`, and the drain goes on past them.
 * Removing is idempotent, so concurrent calls (other requests, other
 * replicas) may share entries.
 * @returns the number of queue entries done.
 * @throws the database's error, or `options.signal`'s reason once it aborted; what was not done stays queued.
 */
export async function removeQueuedVectors(
  knex: Knex,
  indexes: readonly VectorIndex[],
  options: { only?: readonly string[]; signal?: AbortSignal; onRefused?: (error: unknown, refused: number) => void } = {},
): Promise<number> {
  return await drainRemovalQueue<{ id: string }>(knex, {
    table: QUEUE,
    key: 'id',
    maxChunks: MAX_CHUNKS_PER_DRAIN,
    ...options,
    remove: async (entries) => {
      const ids = entries.map((entry) => entry.id);
      for (const index of indexes) await index.remove({ ids });
      await knex(QUEUE).whereIn('id', ids).delete();
      return ids.length;
    },
  });
}
