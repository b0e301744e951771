import { lstat, rm } from 'node:fs/promises';
import Database from 'better-sqlite3';

/** Files SQLite may make beside a database in WAL mode, even for a read-only connection. */
const SIDE_FILES = ['-wal', '-shm'];

/**
 * Runs SQLite's `PRAGMA quick_check` on the database file `path` without
 * changing it: opened read-only (never created, its journal mode and header
 * left as they are, nothing replayed into it), and the `-wal`/`-shm` files
 * SQLite makes beside a WAL-mode database for a read-only connection
 * removed afterwards when they were not there before.
 * @returns SQLite's findings: `['ok']` for a sound database.
 * @throws Error (SQLite's, e.g. `file is not a database`) when the file cannot be read as a database.
 */
export async function quickCheckFile(path: string): Promise<string[]> {
  const made = (
    await Promise.all(SIDE_FILES.map(async (suffix) => ((await lstat(`${path}${suffix}`).catch(() => null)) ? null : `${path}${suffix}`)))
  ).filter((file) => file !== null);
  // Not through createSqliteDatabase: that opens read/write and sets the file up (WAL mode, the vector extension).
  const connection = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return (connection.pragma('quick_check') as Array<Record<string, unknown>>).map((row) => String(Object.values(row)[0]));
  } finally {
    connection.close();
    await Promise.all(made.map((file) => rm(file, { force: true })));
  }
}
