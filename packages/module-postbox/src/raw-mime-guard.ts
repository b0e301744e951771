import { chunks, type SqlDatabase } from '@agentinfra/core';
import type { Knex } from 'knex';
import type { PostboxDeps } from './service-deps.js';

/** Keys whose locks one transaction of {@link RawMimeGuard.deleteUnreferenced} holds at most (well within PostgreSQL's shared lock table). */
const LOCK_CHUNK = 200;

/** The lock taken around a deletion of raw MIME under `key` and around a delivery's check that its blob is still there. */
const lockKeyOf = (key: string) => `postbox:raw-mime:${key}`;

/** What {@link RawMimeGuard.deleteUnreferenced} did: the keys whose blobs it deleted, and those it kept because they were busy. */
export interface UnreferencedDeletion {
  deleted: string[];
  busy: string[];
}

/**
 * Raw MIME blobs are shared by content (`postbox/mime/<sha256>.eml`): the
 * same bytes delivered again, on any replica, reuse the blob of a message
 * being deleted. Within a process, deliveries in progress are known and kept
 * (`RawKeyUsers`); across processes (PostgreSQL), a deletion and a delivery
 * of the same bytes order themselves by a lock per key:
 * - {@link deleteUnreferenced} checks that no stored message refers to a
 *   blob and deletes it while holding the key's lock;
 * - {@link ensure}, after a delivery committed messages that refer to the
 *   blob, takes the lock and writes the blob again when a deletion on
 *   another replica removed it between the delivery's write and its commit.
 * Either the deletion sees the delivery's committed message and keeps the
 * blob, or the delivery finds the blob gone once the deletion committed and
 * writes it back. A database of one process (SQLite) takes no lock.
 */
export interface RawMimeGuard {
  /**
   * Deletes the blobs of `keys` that no stored message refers to and that
   * `busy` does not claim (a delivery of this process storing them; asked
   * with no await between the check and the delete).
   * @returns the keys deleted and the busy ones kept.
   * @throws the blob store's or the database's error (nothing of that chunk is then deleted for certain).
   */
  deleteUnreferenced(keys: readonly string[], busy: (key: string) => boolean): Promise<UnreferencedDeletion>;
  /**
   * After messages referring to `key` committed: writes `raw` under `key`
   * again when it is missing (several processes only).
   * @throws the blob store's or the database's error.
   */
  ensure(key: string, raw: Buffer): Promise<void>;
}

/** A {@link RawMimeGuard} over the postbox's messages and blob store. */
export function createRawMimeGuard(deps: { sql: SqlDatabase; blobStore: PostboxDeps['blobStore'] }): RawMimeGuard {
  const crossProcess = deps.sql.capabilities.multiProcess;

  async function deleteChecked(db: Knex, keys: readonly string[], busy: (key: string) => boolean): Promise<UnreferencedDeletion> {
    const rows = (await db('postbox_messages')
      .whereIn('mime_ref', [...keys])
      .distinct('mime_ref')) as Array<{ mime_ref: string }>;
    const referenced = new Set(rows.map((row) => row.mime_ref));
    const unreferenced = keys.filter((key) => !referenced.has(key));
    // No await between `busy` and the delete: a delivery of this process that starts storing the same bytes after
    // this check writes them after the delete was issued.
    const kept = unreferenced.filter((key) => busy(key));
    const deleted = unreferenced.filter((key) => !busy(key));
    if (deleted.length > 0) await deps.blobStore.delete({ keys: deleted });
    return { deleted, busy: kept };
  }

  return {
    async deleteUnreferenced(keys, busy) {
      if (!crossProcess) return deleteChecked(deps.sql.knex, keys, busy);
      const result: UnreferencedDeletion = { deleted: [], busy: [] };
      for (const chunk of chunks([...new Set(keys)].sort(), LOCK_CHUNK)) {
        const done = await deps.sql.knex.transaction(async (trx) => {
          for (const key of chunk) await deps.sql.lockInTransaction(trx, lockKeyOf(key));
          return deleteChecked(trx, chunk, busy);
        });
        result.deleted.push(...done.deleted);
        result.busy.push(...done.busy);
      }
      return result;
    },

    async ensure(key, raw) {
      if (!crossProcess) return;
      await deps.sql.knex.transaction(async (trx) => {
        await deps.sql.lockInTransaction(trx, lockKeyOf(key));
        if (!(await deps.blobStore.stat({ key }))) await deps.blobStore.put({ key, body: raw, contentType: 'message/rfc822' });
      });
    },
  };
}
