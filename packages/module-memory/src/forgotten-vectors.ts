import { chunks, SQL_ID_CHUNK, type VectorIndex } from '@agentinfra/core';
import type { Knex } from 'knex';

/** Ids of forgotten semantic memories whose vectors may still be in a vector index. */
const QUEUE = 'memory_vector_removals';

/**
 * Queues the vectors of `ids` (semantic memories being forgotten) for
 * removal, in `trx`, the transaction that deletes their records: the queue
 * commits exactly when the records are gone, so no crash or failure after
 * the commit can lose track of a vector left behind.
 */
export async function queueVectorRemovals(trx: Knex.Transaction, ids: readonly string[]): Promise<void> {
  for (const chunk of chunks(ids, SQL_ID_CHUNK)) {
    await trx(QUEUE)
      .insert(chunk.map((id) => ({ id })))
      .onConflict('id')
      .ignore();
  }
}

/**
 * Removes the vectors of the queued memories from every index of `indexes`,
 * then their queue rows, {@link SQL_ID_CHUNK} ids at a time, until a read
 * finds less than a full chunk (the queue is then empty, but for entries
 * other forgets add meanwhile, which those forgets remove). Removing is
 * idempotent, so concurrent calls (other requests, other replicas) may
 * share entries.
 * Stops before the next chunk once `signal` aborts.
 * @returns the number of queue entries done.
 * @throws the vector index's or the database's error, or `signal`'s reason; what was not done stays queued.
 */
export async function removeQueuedVectors(knex: Knex, indexes: readonly VectorIndex[], signal?: AbortSignal): Promise<number> {
  let done = 0;
  for (;;) {
    signal?.throwIfAborted();
    const rows = (await knex(QUEUE).select('id').orderBy('id').limit(SQL_ID_CHUNK)) as Array<{ id: string }>;
    const ids = rows.map((row) => row.id);
    if (ids.length > 0) {
      for (const index of indexes) await index.remove({ ids });
      await knex(QUEUE).whereIn('id', ids).delete();
      done += ids.length;
    }
    if (ids.length < SQL_ID_CHUNK) return done;
  }
}
