import { statfs } from 'node:fs/promises';

/** A folder on a local disk the server writes to, by a short name for /ready and /metrics (`database`, `blobs`). */
export interface WatchedDisk {
  name: string;
  path: string;
}

/** Free space under this (bytes) is low whatever the disk's size. */
const LOW_FLOOR_BYTES = 64 * 1024 * 1024;
/** Free space under this share of the disk is low, up to {@link LOW_SHARE_CAP_BYTES}. */
const LOW_SHARE = 0.01;
/** On a large disk the share would be gigabytes: free space above this is never low. */
const LOW_SHARE_CAP_BYTES = 1024 * 1024 * 1024;

/**
 * Space on the disk holding `disk.path`, in bytes, as `statfs(2)` reports it:
 * `freeBytes` is what an unprivileged process may still write (f_bavail ×
 * f_bsize), `totalBytes` the file system's size (f_blocks × f_bsize).
 * @throws the `statfs` error (ENOENT when the folder is missing).
 */
export async function diskSpace(disk: WatchedDisk): Promise<{ freeBytes: number; totalBytes: number }> {
  const stats = await statfs(disk.path);
  return { freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize };
}

/**
 * The /ready check of one disk: `ok`, `low: <n> MiB free of <m> MiB` when
 * under 64 MiB, or under 1 % of the disk (at most 1 GiB), is free (writes
 * will soon answer 507), or
 * `unreadable: <errno code>`. Never names the path (/ready is unauthenticated).
 */
export async function diskCheck(disk: WatchedDisk): Promise<string> {
  try {
    const { freeBytes, totalBytes } = await diskSpace(disk);
    const low = Math.max(LOW_FLOOR_BYTES, Math.min(totalBytes * LOW_SHARE, LOW_SHARE_CAP_BYTES));
    if (freeBytes >= low) return 'ok';
    const mib = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);
    return `low: ${mib(freeBytes)} MiB free of ${mib(totalBytes)} MiB`;
  } catch (error) {
    return `unreadable: ${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}
