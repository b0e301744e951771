import { parentPort, workerData } from 'node:worker_threads';
import { lowerBackgroundThreadPriority } from '@agentinfra/core/threads';
import Database from 'better-sqlite3';
import type { WalCheckpointWorkerData } from './wal-checkpointer.js';

/** A row of `PRAGMA wal_checkpoint`: frames in the WAL, and how many of them are in the database file. */
interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * The checkpointer's thread: its own connection to the database file, which
 * runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs` (PASSIVE never
 * waits for readers or writers: it copies what it can and leaves the rest to
 * the next turn) until the parent posts `close`. When the WAL still holds
 * more than `sizeLimitBytes` after it, the turn runs a TRUNCATE checkpoint
 * (sqlite.org/wal.html, "Avoiding Excessively Large WAL Files"): writes that
 * never pause would otherwise keep the WAL from ever being reset. That one
 * takes the writer lock, so the connection's busy timeout (`busyTimeoutMs`)
 * bounds how long it waits for the lock and then for readers, holding up
 * writes; when it runs out the checkpoint ends as a PASSIVE one (`busy` 1)
 * and the next turn tries again. A failing checkpoint ends the thread with
 * that error, and the parent turns the automatic checkpoint back on. It runs
 * at background priority: a PASSIVE checkpoint that waits costs a longer WAL
 * file, never a request.
 */
lowerBackgroundThreadPriority();
const { filename, intervalMs, sizeLimitBytes, busyTimeoutMs } = workerData as WalCheckpointWorkerData;
const db = new Database(filename, { fileMustExist: true, timeout: busyTimeoutMs });
/** Bytes of one WAL frame: a page and its 24-byte header. */
const frameBytes = (db.pragma('page_size', { simple: true }) as number) + 24;
function checkpoint(): void {
  const [passive] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[];
  if (passive && passive.log * frameBytes > sizeLimitBytes) db.pragma('wal_checkpoint(TRUNCATE)');
}
const timer = setInterval(checkpoint, intervalMs);
parentPort?.on('message', (message: unknown) => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
