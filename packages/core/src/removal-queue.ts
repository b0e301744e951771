import type { Knex } from 'knex';
import { chunks, SQL_ID_CHUNK } from './sql-chunks.js';

/**
 * A removal queue is a table of keys naming things outside the database
 * (blob store objects, vectors in a vector index) that deleted rows referred
 * to. A deletion queues its keys in its own transaction, so the queue
 * commits exactly when the rows are gone and no failure or crash after the
 * commit can lose track of what was left behind; {@link drainRemovalQueue}
 * removes the things and dequeues them afterwards, and again from a job for
 * what a failure or crash left.
 */

/**
 * Queues `keys` in `table` (whose `column` is unique) in `trx`, the
 * transaction deleting the rows that named them, {@link SQL_ID_CHUNK} keys
 * per statement. A key queued already stays as it is.
 */
export async function queueRemovals(trx: Knex, table: string, column: string, keys: readonly string[]): Promise<void> {
  for (const chunk of chunks(keys, SQL_ID_CHUNK)) {
    await trx(table)
      .insert(chunk.map((key) => ({ [column]: key })))
      .onConflict(column)
      .ignore();
  }
}

/** What {@link drainRemovalQueue} drains and how. `Entry` is a queue row of `columns`; the key column holds strings. */
export interface RemovalDrain<Entry> {
  /** The queue table. */
  table: string;
  /** Its unique key column, walked in order. */
  key: string;
  /** The columns read per entry; `[key]` by default. */
  columns?: readonly string[];
  /**
   * Only the entries of these keys (what a deletion just queued), instead of
   * the queue in key order; keys not queued (any more) are skipped, and a
   * failure is thrown (no entry-by-entry retry).
   */
  only?: readonly string[];
  /** Chunks of {@link SQL_ID_CHUNK} entries one call reads at most, walking the queue (not with `only`); the next call goes on. */
  maxChunks: number;
  /**
   * Removes what `entries` name and dequeues the entries done, all or
   * throwing; removing must be idempotent (concurrent drains, other
   * replicas, may share entries).
   * @returns a count added to the drain's result (entries done, or objects removed).
   */
  remove(entries: Entry[]): Promise<number>;
  /** Told when the store refused a chunk: its error and how many entries of it were refused on their own too (they stay queued). */
  onRefused?: (error: unknown, refused: number) => void;
  /** Checked before each chunk. */
  signal?: AbortSignal;
}

/**
 * Drains a removal queue: reads entries {@link SQL_ID_CHUNK} at a time and
 * hands each chunk to `remove`.
 * - With `only` (right after a deletion, in its caller's time): the entries
 *   of those keys, tried once; the first failure is thrown, and what it
 *   left stays queued for the next walk.
 * - Without (at start and from a job): the queue in key order from where
 *   the last chunk ended, until a read finds less than a full chunk or
 *   `maxChunks` were read. When `remove` throws for a chunk, each entry of
 *   it is tried on its own, so that one the store keeps refusing (an object
 *   lock, a permission) stays queued without holding up the others, and the
 *   walk goes on after it.
 * @returns the sum of what `remove` returned.
 * @throws `remove`'s error with `only`, the database's error, or the signal's reason once it aborted; what was not done stays queued.
 */
export async function drainRemovalQueue<Entry extends object>(knex: Knex, drain: RemovalDrain<Entry>): Promise<number> {
  const columns = [...(drain.columns ?? [drain.key])];
  let done = 0;
  if (drain.only) {
    for (const keys of chunks(drain.only, SQL_ID_CHUNK)) {
      drain.signal?.throwIfAborted();
      const entries = (await knex(drain.table).select(columns).whereIn(drain.key, keys)) as Entry[];
      if (entries.length > 0) done += await drain.remove(entries);
    }
    return done;
  }
  let after = '';
  for (let chunk = 0; chunk < drain.maxChunks; chunk++) {
    drain.signal?.throwIfAborted();
    const entries = (await knex(drain.table)
      .select(columns)
      .where(drain.key, '>', after)
      .orderBy(drain.key)
      .limit(SQL_ID_CHUNK)) as Entry[];
    done += await removeChunk(drain, entries);
    if (entries.length < SQL_ID_CHUNK) break;
    after = String((entries[entries.length - 1] as Record<string, unknown>)[drain.key]);
  }
  return done;
}

/** `drain.remove(entries)`, and when it throws, each entry on its own. */
async function removeChunk<Entry>(drain: RemovalDrain<Entry>, entries: Entry[]): Promise<number> {
  if (entries.length === 0) return 0;
  try {
    return await drain.remove(entries);
  } catch (error) {
    let done = 0;
    let refused = 0;
    for (const entry of entries) {
      try {
        done += await drain.remove([entry]);
      } catch {
        refused += 1;
      }
    }
    drain.onRefused?.(error, refused);
    return done;
  }
}
