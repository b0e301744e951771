import { type BlobStore, drainRemovalQueue, queueRemovals } from '@agentinfra/core';
import type { Knex } from 'knex';

/** Blob store keys of purged artifacts (uploads and committed objects), or of discarded commit copies, whose objects may still be stored. */
const QUEUE = 'artifacts_object_removals';

/** Queue entries one {@link removeQueuedObjects} call walks at most: this many chunks of `SQL_ID_CHUNK` keys. */
export const MAX_CHUNKS_PER_DRAIN = 20;

/**
 * Queues the objects at `keys` for deletion, in `trx`, the transaction that
 * deletes the artifact rows naming them (or, for an object no row names, on
 * its own before the delete is tried): the queue commits exactly when the
 * rows are gone, so no failure or crash after the commit can lose track of
 * an object left behind. The keys of an artifact are its own (its id is in
 * them) and never reused, so a queued key names nothing live.
 */
export async function queueObjectRemovals(trx: Knex, keys: readonly string[]): Promise<void> {
  await queueRemovals(trx, QUEUE, 'object_key', keys);
}

/**
 * Deletes queued objects from `store` and their queue entries
 * (`drainRemovalQueue` of core): those of `options.only` (what a purge just
 * queued), or else the queue in key order, at most
 * {@link MAX_CHUNKS_PER_DRAIN} chunks per call (the next call goes on). Keys
 * the store refuses stay queued, reported to `options.onRefused` with the
 * error and how many, and the drain goes on past them. Deleting is
 * idempotent (the store ignores missing keys), so concurrent calls (other
 * replicas, a purge's own removal) may share entries.
 * @param options.signal checked between chunks.
 * @returns the number of queue entries done.
 * @throws the database's error, or the signal's reason once it aborted; what was not done stays queued.
 */
export async function removeQueuedObjects(
  knex: Knex,
  store: BlobStore,
  options: { only?: readonly string[]; signal?: AbortSignal; onRefused?: (error: unknown, keys: number) => void } = {},
): Promise<number> {
  return await drainRemovalQueue<{ object_key: string }>(knex, {
    table: QUEUE,
    key: 'object_key',
    maxChunks: MAX_CHUNKS_PER_DRAIN,
    ...options,
    remove: async (entries) => {
      const keys = entries.map((entry) => entry.object_key);
      await store.delete({ keys });
      await knex(QUEUE).whereIn('object_key', keys).delete();
      return keys.length;
    },
  });
}
