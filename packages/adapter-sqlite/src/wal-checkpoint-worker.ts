import { parentPort, workerData } from 'node:worker_threads';
import { lowerBackgroundThreadPriority } from '@agentinfra/core/threads';
import Database from 'better-sqlite3';
import type { WalCheckpointWorkerData } from './wal-checkpointer.js';

/**
 * The checkpointer's thread: its own connection to the database file, which
 * runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs` (PASSIVE never
 * waits for readers or writers: it copies what it can and leaves the rest to
 * the next turn) until the parent posts `close`. A failing checkpoint ends
 * the thread with that error, and the parent turns the automatic checkpoint
 * back on. It runs at background priority: a checkpoint that waits costs a
 * longer WAL file, never a request.
 */
lowerBackgroundThreadPriority();
const { filename, intervalMs } = workerData as WalCheckpointWorkerData;
const db = new Database(filename, { fileMustExist: true });
const timer = setInterval(() => db.pragma('wal_checkpoint(PASSIVE)'), intervalMs);
parentPort?.on('message', (message: unknown) => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
