import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

/** Below this much room (bytes) for the database to grow, a write that fails without a reason is taken for a full disk. */
const NEARLY_FULL_BYTES = 64 * 1024 * 1024;

/**
 * Bytes the database on `db` can still grow by: the smaller of the room under
 * its `max_page_count` and the space left to unprivileged users on the disk
 * that holds its file (`statfs` f_bavail × f_bsize; unbounded for `:memory:`).
 */
function roomToGrow(db: BetterSqlite3.Database): number {
  const pages = db.pragma('page_count', { simple: true }) as number;
  const maxPages = db.pragma('max_page_count', { simple: true }) as number;
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const underLimit = (maxPages - pages) * pageSize;
  if (db.memory) return underLimit;
  const disk = statfsSync(dirname(db.name));
  return Math.min(underLimit, disk.bavail * disk.bsize);
}

/** sqlite-vec's message for a chunk it could not add (the SQLITE_FULL beneath is not passed on). */
const CHUNK_NOT_ADDED = /Could not insert a new vector chunk/;

/**
 * sqlite-vec reports a chunk it could not add as a generic SQLITE_ERROR
 * ("Could not insert a new vector chunk"), hiding the SQLITE_FULL beneath.
 * When that is the error and the database has under 64 MiB left to grow,
 * it is returned as an Error with `code: 'SQLITE_FULL'` (and the original
 * as `cause`) so the kernel answers 507; any other error, or one whose room
 * cannot be read, is returned as it is.
 */
export function revealFullDatabase(db: BetterSqlite3.Database, error: unknown): unknown {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'SQLITE_ERROR' || typeof message !== 'string' || !CHUNK_NOT_ADDED.test(message)) return error;
  try {
    if (roomToGrow(db) >= NEARLY_FULL_BYTES) return error;
  } catch {
    return error;
  }
  return Object.assign(new Error(`database or disk is full (${message})`, { cause: error }), { code: 'SQLITE_FULL' });
}
