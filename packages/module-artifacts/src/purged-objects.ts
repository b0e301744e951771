import { type BlobStore, chunks, SQL_ID_CHUNK } from '@agentinfra/core';
import type { Knex } from 'knex';

/** Blob store keys of purged artifacts (uploads and committed objects), or of discarded commit copies, whose objects may still be stored. */
const QUEUE = 'artifacts_object_removals';

/** Queue entries one {@link removeQueuedObjects} call handles at most: this many chunks of {@link SQL_ID_CHUNK} keys. */
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
  for (const chunk of chunks(keys, SQL_ID_CHUNK)) {
    await trx(QUEUE)
      .insert(chunk.map((key) => ({ object_key: key })))
      .onConflict('object_key')
      .ignore();
  }
}

/**
 * Deletes the objects at `keys` (queued by {@link queueObjectRemovals}) from
 * `store`, then their queue entries, {@link SQL_ID_CHUNK} keys per call to
 * the store.
 * @throws the blob store's or the database's error; what was not done stays queued.
 */
export async function removeObjects(knex: Knex, store: BlobStore, keys: readonly string[]): Promise<void> {
  for (const chunk of chunks(keys, SQL_ID_CHUNK)) {
    await store.delete({ keys: chunk });
    await knex(QUEUE).whereIn('object_key', chunk).delete();
  }
}

/**
 * Deletes queued objects and their queue entries, {@link SQL_ID_CHUNK} keys
 * at a time in key order, until a read finds less than a full chunk or
 * {@link MAX_CHUNKS_PER_DRAIN} chunks are done (the next call goes on). Keys
 * the store refuses stay queued, and the drain goes on past them (reported
 * to `options.onRefused` with the error and how many).
 * Deleting is idempotent (the store ignores missing keys), so concurrent
 * calls (other replicas, a purge's own removal) may share entries.
 * @param options.signal checked between chunks.
 * @returns the number of queue entries done.
 * @throws the blob store's or the database's error, or the signal's reason once it aborted; what was not done stays queued.
 */
export async function removeQueuedObjects(
  knex: Knex,
  store: BlobStore,
  options: { signal?: AbortSignal; onRefused?: (error: unknown, keys: number) => void } = {},
): Promise<number> {
  let done = 0;
  let after = '';
  for (let chunk = 0; chunk < MAX_CHUNKS_PER_DRAIN; chunk++) {
    options.signal?.throwIfAborted();
    const rows = (await knex(QUEUE)
      .select('object_key')
      .where('object_key', '>', after)
      .orderBy('object_key')
      .limit(SQL_ID_CHUNK)) as Array<{
      object_key: string;
    }>;
    const keys = rows.map((row) => row.object_key);
    done += await removeChunk(knex, store, keys, options.onRefused);
    if (keys.length < SQL_ID_CHUNK) break;
    after = keys[keys.length - 1] ?? after;
  }
  return done;
}

/**
 * {@link removeObjects} of `keys`, and when the blob store refuses the
 * chunk, each key on its own: an object the store keeps refusing (an object
 * lock, a permission) stays queued without holding up the others, and the
 * drain goes on after it.
 * @returns the keys done.
 */
async function removeChunk(
  knex: Knex,
  store: BlobStore,
  keys: readonly string[],
  onRefused: ((error: unknown, keys: number) => void) | undefined,
): Promise<number> {
  if (keys.length === 0) return 0;
  try {
    await removeObjects(knex, store, keys);
    return keys.length;
  } catch (error) {
    let done = 0;
    for (const key of keys) {
      try {
        await removeObjects(knex, store, [key]);
        done += 1;
      } catch {
        // Stays queued.
      }
    }
    onRefused?.(error, keys.length - done);
    return done;
  }
}
