import { randomUUID } from 'node:crypto';
import { chunks, drainRemovalQueue, SQL_ID_CHUNK } from '@agentinfra/core';
import type { Knex } from 'knex';
import { MIME_PREFIX } from './inbound.js';
import type { MessageRow } from './message-view.js';
import type { RawMimeGuard } from './raw-mime-guard.js';
import type { PostboxDeps } from './service-deps.js';

/** Raw MIME blobs of deleted messages that may still be in the blob store. */
const QUEUE = 'postbox_mime_removals';
/** Chunks of {@link SQL_ID_CHUNK} entries one drain of the whole queue works through at most. */
const MAX_BACKLOG_CHUNKS = 10;

interface QueueEntry {
  mime_ref: string;
  token: string;
}

/**
 * The distinct raw MIME keys of `rows` that the postbox stored itself
 * (`mime_owned`, under {@link MIME_PREFIX}); a `mime_ref` given to /ingest
 * belongs to the external MTA and is never the postbox's to delete.
 */
function ownedMimeRefs(rows: ReadonlyArray<Pick<MessageRow, 'mime_ref' | 'mime_owned'>>): string[] {
  const refs = rows.filter((row) => row.mime_owned && row.mime_ref?.startsWith(MIME_PREFIX)).map((row) => row.mime_ref as string);
  return [...new Set(refs)];
}

/**
 * The removal queue of raw MIME: a deletion of messages queues their blobs
 * ({@link MimeRemovals.queue}) in its own transaction, so the queue commits
 * exactly when the rows are gone and no failure or crash after the commit
 * can lose track of a blob; {@link MimeRemovals.remove} deletes queued blobs
 * no message refers to any more and dequeues them.
 */
export interface MimeRemovals {
  /**
   * Queues the owned raw MIME of `rows` (see {@link ownedMimeRefs}) in `trx`, the transaction deleting them.
   * @returns the keys queued, for {@link MimeRemovals.remove} once `trx` committed.
   */
  queue(trx: Knex.Transaction, rows: ReadonlyArray<Pick<MessageRow, 'mime_ref' | 'mime_owned'>>): Promise<string[]>;
  /**
   * Removes queued blobs: those of `refs` (what a deletion just queued), or
   * without `refs` the queue in key order, at most
   * {@link MAX_BACKLOG_CHUNKS} × {@link SQL_ID_CHUNK} entries per call (the
   * module's start and its `postbox.remove-deleted-mime` job). A failure is
   * logged, not thrown; what was not done stays queued for the next call.
   * @param signal checked between chunks (the job's).
   * @returns the number of blobs deleted from the blob store.
   * @throws the signal's reason once it aborted.
   */
  remove(refs?: readonly string[], signal?: AbortSignal): Promise<number>;
}

/**
 * {@link MimeRemovals} over the postbox tables. Whether a queued blob is
 * still used is checked when it is removed, not when it was queued: a blob
 * that a message stored meanwhile refers to (the same bytes delivered again;
 * one SMTP delivery to several recipients shares it), or that a delivery of
 * this process (`storing`) is writing, is kept; one that a delivery on
 * another replica wrote meanwhile is kept or written back by it (the lock
 * of `raw-mime-guard.ts`). Deleting a missing blob is
 * fine (the blob store ignores missing keys), so concurrent drains (a route,
 * the job, another replica) may share entries.
 */
export function createMimeRemovals(deps: {
  knex: () => Knex;
  logger: PostboxDeps['logger'];
  /** Deletes blobs no message refers to (under each key's lock when several processes share the database). */
  rawGuard: RawMimeGuard;
  /** Whether a delivery of this process is storing raw MIME under this key now. */
  storing: (key: string) => boolean;
}): MimeRemovals {
  /** Deletes the blobs of `entries` no message refers to, then dequeues them. @returns the blobs deleted. */
  async function removeEntries(entries: readonly QueueEntry[]): Promise<number> {
    if (entries.length === 0) return 0;
    const refs = entries.map((entry) => entry.mime_ref);
    // Also before the query: a delivery of this process storing the same bytes now may commit (and end) while the
    // query runs, unseen by it.
    const storingBefore = new Set(refs.filter((ref) => deps.storing(ref)));
    // One storing them now, or before the query, keeps its entry.
    const { deleted, busy } = await deps.rawGuard.deleteUnreferenced(refs, (ref) => storingBefore.has(ref) || deps.storing(ref));
    const kept = new Set(busy);
    const done = entries.filter((entry) => !kept.has(entry.mime_ref)).map((entry) => entry.token);
    // By token: an entry queued again meanwhile (a new token) stays for its own deletion's drain.
    if (done.length > 0) await deps.knex()(QUEUE).whereIn('token', done).delete();
    return deleted.length;
  }

  /** {@link drainRemovalQueue} of the entries of `refs`, or without `refs` of the queue in key order. */
  async function drain(refs: readonly string[] | undefined, signal: AbortSignal | undefined): Promise<number> {
    return await drainRemovalQueue<QueueEntry>(deps.knex(), {
      signal,
      table: QUEUE,
      key: 'mime_ref',
      columns: ['mime_ref', 'token'],
      only: refs,
      maxChunks: MAX_BACKLOG_CHUNKS,
      remove: removeEntries,
      onRefused: (error, refused) =>
        deps.logger.warn(
          { err: error, refused },
          'postbox: the blob store refused to remove some raw MIME of deleted messages; it stays queued',
        ),
    });
  }

  return {
    async queue(trx, rows) {
      const refs = ownedMimeRefs(rows);
      for (const chunk of chunks(refs, SQL_ID_CHUNK)) {
        await trx(QUEUE)
          .insert(chunk.map((mimeRef) => ({ mime_ref: mimeRef, token: randomUUID() })))
          .onConflict('mime_ref')
          .merge(['token']);
      }
      return refs;
    },

    async remove(refs, signal) {
      try {
        return await drain(refs, signal);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        deps.logger.warn({ err: error }, 'postbox: could not remove the raw MIME of deleted messages; it stays queued and is retried');
        return 0;
      }
    },
  };
}
