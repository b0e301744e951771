import Database from 'better-sqlite3';

/** A lock held for as long as one process serves a SQLite database. */
export interface ServeLock {
  /** The lock file, `<database>.serve-lock`. */
  readonly file: string;
  /** Lets the next process take the lock (also happens when this process exits, however it ends). */
  release(): void;
}

/**
 * Takes the lock that lets one process at a time serve the SQLite database
 * `filename`: an exclusive SQLite lock (`PRAGMA locking_mode = EXCLUSIVE`
 * and a write) on the side file `<filename>.serve-lock`, held by an open
 * connection. The operating system drops it when the process ends, even on
 * SIGKILL or a crash, so a lock is never stale. The database itself is not
 * locked: CLI commands (`issue-device`, `backup`, `audit verify`) still open
 * it beside the server.
 * @returns the held lock, or null when another process holds it.
 */
export function takeServeLock(options: { filename: string }): ServeLock | null {
  const file = `${options.filename}.serve-lock`;
  const db = new Database(file, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS serve_lock (taken_at INTEGER); COMMIT;');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return null;
    throw error;
  }
  return { file, release: () => db.close() };
}
