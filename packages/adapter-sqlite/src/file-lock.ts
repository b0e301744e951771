import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';

/** Milliseconds between two attempts at a lock file another process holds. */
const LOCK_RETRY_MS = 50;

/**
 * Opens the side file `file` and takes an exclusive SQLite lock on it
 * (`PRAGMA locking_mode = EXCLUSIVE` and a write), held by the returned
 * connection until it closes. The operating system drops it when the
 * process ends, even on SIGKILL or a crash, so a lock is never stale.
 * @returns the connection holding the lock, or null when another connection (in any process) holds it.
 */
function tryLockFile(file: string): Database.Database | null {
  const db = new Database(file, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS held_lock (taken_at INTEGER); COMMIT;');
    return db;
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return null;
    throw error;
  }
}

/** A lock held for as long as one process serves a SQLite database. */
export interface ServeLock {
  /** The lock file, `<database>.serve-lock`. */
  readonly file: string;
  /** Lets the next process take the lock (also happens when this process exits, however it ends). */
  release(): void;
}

/**
 * Takes the lock that lets one process at a time serve the SQLite database
 * `filename`: an exclusive lock on the side file `<filename>.serve-lock`
 * (see {@link tryLockFile}). The database itself is not locked: CLI
 * commands (`issue-device`, `backup`, `audit verify`) still open it beside
 * the server.
 * @returns the held lock, or null when another process holds it.
 */
export function takeServeLock(options: { filename: string }): ServeLock | null {
  const file = `${options.filename}.serve-lock`;
  const db = tryLockFile(file);
  return db === null ? null : { file, release: () => db.close() };
}

/**
 * The side file that locks `key` for the database `filename`:
 * `<filename>.<key in letters, digits, - and _, at most 40>-<12 hex digits of its SHA-256>.lock`
 * (`agentinfra.db.agentinfra-migrations-<hash>.lock`). The hash keeps keys
 * that read alike (`a:b`, `a.b`) on files of their own, and any key short
 * enough for a file name.
 */
export function lockFileOf(filename: string, key: string): string {
  const readable = key.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 40);
  return `${filename}.${readable}-${createHash('sha256').update(key).digest('hex').slice(0, 12)}.lock`;
}

/**
 * Runs `work` while holding an exclusive lock on the side file `file`, so
 * that one process at a time runs it (e.g. `agentinfra migrate` started
 * twice on a fresh data folder). While another process holds the lock,
 * waits for it without limit (as `pg_advisory_lock` does), trying again
 * every {@link LOCK_RETRY_MS} ms without blocking the event loop.
 * @returns what `work` returns; the lock is released when it settles.
 */
export async function withFileLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  let db = tryLockFile(file);
  while (db === null) {
    await sleep(LOCK_RETRY_MS);
    db = tryLockFile(file);
  }
  try {
    return await work();
  } finally {
    db.close();
  }
}
