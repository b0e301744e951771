import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { isMainThread } from 'node:worker_threads';

/**
 * The nice value (POSIX `setpriority`, -20 … 19; higher runs later) that
 * {@link lowerBackgroundThreadPriority} gives a worker thread. At 10 the
 * Linux scheduler gives a thread about a tenth of the CPU share of a nice-0
 * thread when both want the same core, so the event loop, which answers every
 * request, runs first and a thread parsing a 10 MiB mail uses what is left.
 */
export const BACKGROUND_THREAD_NICE = 10;

/**
 * Lowers the scheduling priority of the calling worker thread, and of it
 * alone, to `nice` (default {@link BACKGROUND_THREAD_NICE}): call it once at
 * the top of a worker script whose work may wait (JSON and MIME parsing, the
 * SQLite WAL checkpoint). On Linux, `setpriority(PRIO_PROCESS, tid)` applies
 * to one thread, found as the last segment of `/proc/thread-self`; raising a
 * nice value needs no privilege. The same idea as RocksDB's
 * `LowerThreadPoolCPUPriority` for its compaction threads.
 * @returns whether the priority was set: false on the main thread (never
 *   lowered: it runs the event loop), on other platforms (where
 *   `setpriority` would change the whole process), and when `/proc` is not
 *   readable. It never throws.
 */
export function lowerBackgroundThreadPriority(nice: number = BACKGROUND_THREAD_NICE): boolean {
  if (isMainThread || process.platform !== 'linux') return false;
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(threadId) || threadId <= 0) return false;
    setPriority(threadId, nice);
    return true;
  } catch {
    return false;
  }
}
