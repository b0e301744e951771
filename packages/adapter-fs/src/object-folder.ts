import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parentsOfCreated, syncFolders } from './folder-sync.js';
import { UploadSizeError } from './fs-adapter-error.js';

/** A chunk source: a Node stream, a web stream or any async iterable of bytes. */
export type ByteSource = AsyncIterable<Uint8Array>;

/** Bytes gathered before one `writev`. */
const WRITE_BATCH = 1 << 20;
/** Chunks gathered before one `writev`, so a body sent in tiny chunks cannot pile up objects in memory. */
const WRITE_BATCH_CHUNKS = 256;
/** Bytes of a body read and dropped after the disk refused a write, before giving up on reading the rest. */
const MAX_DRAIN_BYTES = 8 << 20;

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * The on-disk layout of the fs blob store:
 * `<dir>/objects/<first 2 hex>/<sha256 of key in hex>` for objects and
 * `<dir>/tmp/<uuid>.part` for writes in progress. File names derive from a
 * hash of the key, so no key can name a path outside `objects/`, keys like
 * `a` and `a/b` coexist, and segment length limits of the file system never
 * apply. Writes go to a temp file in the same folder tree and are renamed into
 * place, so readers see the old or the new object whole. When durable, a write
 * or move returns only once its file data and the folders it changed (the
 * folders renamed into and out of, and the parents of folders it created) are
 * fsynced, so what it acknowledged survives a power loss; a remove, once the
 * folders it removed from are.
 */
export interface ObjectFolder {
  /** Absolute path of the file holding `key`. */
  pathOf(key: string): string;
  /**
   * Streams `source` into `key` atomically, fsyncing first when durable.
   * @param exactSize when set, the write fails with {@link UploadSizeError} as soon as
   *   the body passes it, or at the end when it falls short; nothing is stored then.
   * @returns bytes written.
   */
  write(options: { key: string; source: ByteSource; exactSize?: number }): Promise<number>;
  /** An open read handle, or `null` when the object does not exist. */
  open(key: string): Promise<FileHandle | null>;
  /** Size in bytes, or `null` when missing. */
  size(key: string): Promise<number | null>;
  /** Renames `from` onto `to` (fsyncing the folders when durable). @returns `false` when `from` is missing. */
  move(from: string, to: string): Promise<boolean>;
  /**
   * Removes the objects of `keys`; a missing one is fine. When durable, then
   * fsyncs each folder an object was removed from, once, so a deleted object
   * does not come back after a power loss.
   */
  remove(keys: readonly string[]): Promise<void>;
  /** Stops the periodic removal of stale temp files. */
  close(): void;
}

/** A temp file nobody has written to for this long (ms) was left by a process that died mid-write. */
export const STALE_PART_MS = 60 * 60_000;

/** How often (ms) a running folder looks for stale temp files again. */
export const STALE_PART_SWEEP_MS = 15 * 60_000;

/**
 * Removes the `.part` files in `tmp` last written over {@link STALE_PART_MS}
 * ago (a write in progress touches its file with every batch), so that an
 * upload cut off by a crash or a kill does not hold disk space for ever.
 * Best effort: files that vanish or cannot be removed are skipped.
 * @returns how many were removed.
 */
export async function removeStaleParts(tmp: string, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const name of await readdir(tmp).catch(() => [] as string[])) {
    if (!name.endsWith('.part')) continue;
    const path = join(tmp, name);
    const modified = await stat(path).then(
      (stats) => stats.mtimeMs,
      () => now,
    );
    if (now - modified < STALE_PART_MS) continue;
    await rm(path, { force: true }).then(
      () => {
        removed += 1;
      },
      () => undefined,
    );
  }
  return removed;
}

/** Reads and drops up to {@link MAX_DRAIN_BYTES} of `source`; a source that fails while being read is left as it is. */
async function drain(source: ByteSource): Promise<void> {
  let drained = 0;
  try {
    for await (const chunk of source) {
      drained += chunk.byteLength;
      if (drained > MAX_DRAIN_BYTES) return;
    }
  } catch {
    // The client went away: there is no one left to answer.
  }
}

/**
 * Creates the folders (synchronously, once), removes stale temp files now and every {@link STALE_PART_SWEEP_MS}
 * (those a killed process left less than an hour before this one started become stale while it runs), and returns
 * the layout over `dir`.
 * When durable, the parents of the folders created here are fsynced with the first rename.
 */
export function createObjectFolder(options: { dir: string; durable: boolean }): ObjectFolder {
  const objects = join(options.dir, 'objects');
  const tmp = join(options.dir, 'tmp');
  /** Folders whose new entries no rename has fsynced yet. */
  let unsynced = [
    ...parentsOfCreated(mkdirSync(objects, { recursive: true }), objects),
    ...parentsOfCreated(mkdirSync(tmp, { recursive: true }), tmp),
  ];
  void removeStaleParts(tmp);
  const sweep = setInterval(() => void removeStaleParts(tmp), STALE_PART_SWEEP_MS);
  sweep.unref();

  const pathOf = (key: string) => {
    const hex = createHash('sha256').update(key, 'utf8').digest('hex');
    return join(objects, hex.slice(0, 2), hex);
  };

  /** Renames `from` to `to`, creating the shard folder; when durable, then fsyncs every folder that changed, once each. */
  const renameInto = async (from: string, to: string) => {
    const created = await mkdir(dirname(to), { recursive: true });
    await rename(from, to);
    if (!options.durable) return;
    await syncFolders([...unsynced, dirname(to), dirname(from), ...parentsOfCreated(created, dirname(to))]);
    unsynced = [];
  };

  return {
    pathOf,
    async write({ key, source, exactSize }) {
      const temp = join(tmp, `${randomUUID()}.part`);
      let handle: FileHandle;
      try {
        handle = await open(temp, 'wx');
      } catch (error) {
        // No file to write to (no inode or descriptor left): read and drop a little of the body all the same, so that
        // a client still sending gets the answer rather than a reset connection.
        await drain(source);
        throw error;
      }
      let handleOpen = true;
      let written = 0;
      // One batch (about WRITE_BATCH bytes) is being written while the next one is received. Its failure (ENOSPC)
      // is caught at once (a rejection nobody awaits would end the process).
      let inFlight: Promise<void> = Promise.resolve();
      let writeFailure = null as { error: unknown } | null;
      let batch: Uint8Array[] = [];
      let batchBytes = 0;
      const discard = async () => {
        await inFlight;
        if (handleOpen) {
          handleOpen = false;
          await handle.close().catch(() => undefined);
        }
        await rm(temp, { force: true });
      };
      const flush = async () => {
        await inFlight;
        if (batch.length > 0 && writeFailure === null) {
          inFlight = handle.writev(batch).then(
            () => undefined,
            (error: unknown) => {
              writeFailure = { error };
            },
          );
        }
        batch = [];
        batchBytes = 0;
      };
      try {
        let drained = 0;
        for await (const chunk of source) {
          written += chunk.byteLength;
          if (exactSize !== undefined && written > exactSize) throw new UploadSizeError('too_large', exactSize);
          if (writeFailure) {
            // The disk refused: free what the temp file holds at once, then read (and drop) a little more of the
            // body so that a client still sending gets the answer rather than a reset connection.
            if (drained === 0) await discard();
            drained += chunk.byteLength;
            if (drained > MAX_DRAIN_BYTES) break;
            continue;
          }
          batch.push(chunk);
          batchBytes += chunk.byteLength;
          if (batchBytes >= WRITE_BATCH || batch.length >= WRITE_BATCH_CHUNKS) await flush();
        }
        if (writeFailure === null && exactSize !== undefined && written < exactSize) throw new UploadSizeError('too_small', exactSize);
        await flush();
        await inFlight;
        if (writeFailure) throw writeFailure.error;
        if (options.durable) await handle.datasync();
        handleOpen = false;
        await handle.close();
        await renameInto(temp, pathOf(key));
        return written;
      } catch (error) {
        await discard();
        throw error;
      }
    },
    async open(key) {
      try {
        return await open(pathOf(key), 'r');
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },
    async size(key) {
      try {
        return (await stat(pathOf(key))).size;
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },
    async move(from, to) {
      try {
        await renameInto(pathOf(from), pathOf(to));
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
    },
    async remove(keys) {
      const removedFrom: string[] = [];
      for (const path of keys.map(pathOf)) {
        try {
          await unlink(path);
          removedFrom.push(dirname(path));
        } catch (error) {
          if (!isMissing(error)) throw error;
        }
      }
      if (options.durable) await syncFolders(removedFrom);
    },
    close() {
      clearInterval(sweep);
    },
  };
}
