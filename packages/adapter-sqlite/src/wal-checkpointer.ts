import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

/** What the checkpoint thread is started with. */
export interface WalCheckpointWorkerData {
  /** Path of the database file (not `:memory:`). */
  filename: string;
  /** Milliseconds between two checkpoints. */
  intervalMs: number;
  /** Bytes of WAL content above which the thread asks the parent to truncate the WAL (message `large`). */
  sizeLimitBytes: number;
}

/**
 * Milliseconds between two WAL checkpoints of the embedded database: at a few
 * thousand writes a second the WAL grows a few MB between two of them, and a
 * checkpoint with nothing to copy costs microseconds.
 */
export const WAL_CHECKPOINT_INTERVAL_MS = 250;

/**
 * Bytes the WAL file is kept to: the database's `journal_size_limit` (a
 * writer that restarts the WAL cuts the file back to this size at its first
 * commit), and the WAL content above which a TRUNCATE checkpoint follows the
 * PASSIVE one. Under writes that never pause, a commit always lands between
 * a PASSIVE checkpoint and the next write, so SQLite never restarts the WAL
 * and the file grows without bound (361 MB next to a 21 MB database in a
 * scale walkthrough).
 */
export const WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Milliseconds the first retry of a TRUNCATE checkpoint that found the WAL
 * busy (another process reading the file: a backup, `audit verify`) waits;
 * each busy one doubles it, up to {@link WAL_TRUNCATE_MAX_BACKOFF_MS}.
 */
export const WAL_TRUNCATE_BACKOFF_MS = 1_000;
/** Longest wait between two TRUNCATE checkpoints that find the WAL busy. */
export const WAL_TRUNCATE_MAX_BACKOFF_MS = 30_000;

/** A running checkpoint thread. */
export interface WalCheckpointer {
  /** Stops the thread after its current checkpoint; resolves once it exited. */
  close(): Promise<void>;
}

/**
 * Starts the WAL checkpoints of database file `filename` in a worker thread
 * (issue #11). SQLite's automatic checkpoint runs inside the commit that
 * crosses 1,000 WAL pages, on the event loop, and doubled the stall of
 * storing a 6 MB mail (bench/RESULTS.md, "worst-case"). The caller turns the
 * automatic checkpoint off on its connection (`PRAGMA wal_autocheckpoint =
 * 0`); this thread's own connection copies the WAL back into the database
 * file every `intervalMs` (default {@link WAL_CHECKPOINT_INTERVAL_MS}) with a
 * PASSIVE checkpoint, which never blocks the main connection's readers or
 * writer. When the WAL then still holds more than `sizeLimitBytes` (default
 * {@link WAL_SIZE_LIMIT_BYTES}; writes that never pause keep a PASSIVE
 * checkpoint from ever resetting it), the thread calls `onLarge`, and the
 * caller runs {@link truncateWal} on its own connection between two
 * transactions.
 * @param options.onLarge called after a checkpoint that left more than `sizeLimitBytes` in the WAL.
 * @param options.onFailure called once, with the reason, when the thread
 *   ends other than through `close` (the file could not be opened, a
 *   checkpoint failed): the caller must then turn the automatic checkpoint
 *   back on, or the WAL grows without bound.
 */
export function startWalCheckpointer(options: {
  filename: string;
  intervalMs?: number;
  sizeLimitBytes?: number;
  onLarge: () => void;
  onFailure: (reason: string) => void;
}): WalCheckpointer {
  const fromSources = import.meta.url.endsWith('.ts');
  const data: WalCheckpointWorkerData = {
    filename: options.filename,
    intervalMs: options.intervalMs ?? WAL_CHECKPOINT_INTERVAL_MS,
    sizeLimitBytes: options.sizeLimitBytes ?? WAL_SIZE_LIMIT_BYTES,
  };
  const script = new URL(`./wal-checkpoint-worker.${fromSources ? 'ts' : 'js'}`, import.meta.url);
  // From sources (tests), the thread installs tsx's require hook, then requires the .ts entry.
  const worker = fromSources
    ? new Worker(
        `require(${JSON.stringify(fileURLToPath(import.meta.resolve('tsx/cjs/api')))}).register(); require(${JSON.stringify(fileURLToPath(script))});`,
        { eval: true, workerData: data },
      )
    : new Worker(script, { workerData: data });
  worker.unref();
  worker.on('message', (message: unknown) => {
    if (message === 'large') options.onLarge();
  });
  let closing = false;
  let failure = 'the checkpoint thread exited';
  worker.on('error', (error: unknown) => {
    failure = error instanceof Error ? error.message : JSON.stringify(error);
  });
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      if (!closing) options.onFailure(failure);
      resolve();
    }),
  );
  return {
    async close() {
      closing = true;
      worker.postMessage('close');
      await exited;
    },
  };
}

/**
 * Copies what is left of the WAL into the database file and empties the WAL
 * (`PRAGMA wal_checkpoint(TRUNCATE)`) on `connection`, the one the event loop
 * writes through, while none of its transactions is open: a reset from
 * another connection would make a transaction of this one that read before
 * it fail with SQLITE_BUSY_SNAPSHOT when it then writes. It never waits (busy
 * timeout 0 for this statement, the connection's own restored after): when
 * another process is reading, it copies what it can and reports busy.
 * @param busyTimeoutMs the connection's own busy timeout, set back afterwards.
 * @returns false when the WAL could not be emptied (busy), true otherwise.
 */
export function truncateWal(connection: BetterSqlite3.Database, busyTimeoutMs: number): boolean {
  connection.pragma('busy_timeout = 0');
  try {
    const [result] = connection.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    return result?.busy !== 1;
  } finally {
    connection.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
}

/**
 * The `onLarge` handler of {@link startWalCheckpointer}: runs `truncate`
 * (which resolves with {@link truncateWal}'s answer) one at a time, and
 * after a busy one (another process reading) skips reports for
 * {@link WAL_TRUNCATE_BACKOFF_MS}, doubling per busy one up to
 * {@link WAL_TRUNCATE_MAX_BACKOFF_MS}; an emptied WAL resets the wait. A
 * rejected `truncate` (the database closing) is dropped.
 */
export function truncateWhenLarge(truncate: () => Promise<boolean>): () => void {
  let running = false;
  let backoffMs = 0;
  let notBefore = 0;
  return () => {
    if (running || Date.now() < notBefore) return;
    running = true;
    truncate()
      .then((emptied) => {
        backoffMs = emptied ? 0 : Math.min(Math.max(WAL_TRUNCATE_BACKOFF_MS, backoffMs * 2), WAL_TRUNCATE_MAX_BACKOFF_MS);
        notBefore = Date.now() + backoffMs;
      })
      .catch(() => undefined)
      .finally(() => {
        running = false;
      });
  };
}
