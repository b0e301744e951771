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
 * more than `sizeLimitBytes` after it, the thread posts `large` to the
 * parent, whose own connection resets the WAL between two transactions
 * (a reset from this connection would make any transaction of the parent
 * that read before it fail with SQLITE_BUSY_SNAPSHOT when it then writes).
 * A failing checkpoint ends the thread with that error, and the parent turns
 * the automatic checkpoint back on. It runs at background priority: a
 * checkpoint that waits costs a longer WAL file, never a request.
 */
lowerBackgroundThreadPriority();
const { filename, intervalMs, sizeLimitBytes } = workerData as WalCheckpointWorkerData;
const db = new Database(filename, { fileMustExist: true });
/** Bytes of one WAL frame: a page and its 24-byte header. */
const frameBytes = (db.pragma('page_size', { simple: true }) as number) + 24;
function checkpoint(): void {
  const [passive] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[];
  if (passive && passive.log * frameBytes > sizeLimitBytes) parentPort?.postMessage('large');
}
const timer = setInterval(checkpoint, intervalMs);
parentPort?.on('message', (message: unknown) => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
