import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type ServeLock, takeServeLock } from '@agentinfra/adapter-sqlite';

/** Base name, inside a staging folder, of the file its run keeps locked (`run.serve-lock`). */
const LOCK_BASE = 'run';
/** Files the lock puts in a staging folder (SQLite keeps a journal beside it): never part of what is staged. */
export const STAGE_LOCK_FILES: readonly string[] = [`${LOCK_BASE}.serve-lock`, `${LOCK_BASE}.serve-lock-journal`];

/**
 * Marks `stage`, a folder this run has just made, as in use for as long as
 * this process lives: an exclusive SQLite lock on `run.serve-lock` in it
 * (see `takeServeLock`), which the operating system drops when the process
 * ends, on SIGKILL or a crash too, and which every process on this machine
 * sees, whatever its PID namespace. Release it after removing the folder.
 * @throws Error when the lock file cannot be made, or another process holds it.
 */
export function lockStage(stage: string): ServeLock {
  const lock = takeServeLock({ filename: join(stage, LOCK_BASE) });
  if (!lock) throw new Error(`${stage} is in use by another process`);
  return lock;
}

/** What {@link removeIfDead} found: `removed` (its run had ended), `live` (its run holds the lock), `unknown` (left). */
export type StageState = 'removed' | 'live' | 'unknown';

/**
 * Removes the staging folder `folder` when the run that made it has ended:
 * its lock file holds a lock once taken (SQLite wrote it while holding the
 * lock) that can be taken again. A folder whose lock a live run holds, with
 * no lock taken (made by an older version, or by a run still starting), or
 * that cannot be read or removed, is left as it is.
 */
export async function removeIfDead(folder: string): Promise<StageState> {
  const lockFile = join(folder, STAGE_LOCK_FILES[0] as string);
  const [info, file] = await Promise.all([lstat(folder).catch(() => null), lstat(lockFile).catch(() => null)]);
  if (!info?.isDirectory() || !file?.isFile() || file.size === 0) return 'unknown';
  let lock: ServeLock | null;
  try {
    lock = takeServeLock({ filename: join(folder, LOCK_BASE) });
  } catch {
    return 'unknown';
  }
  if (!lock) return 'live';
  try {
    await rm(folder, { recursive: true, force: true });
    return 'removed';
  } catch {
    return 'unknown';
  } finally {
    lock.release();
  }
}

/**
 * Removes every staging folder in `dir` named `prefix…` that a run killed
 * midway left (see {@link removeIfDead}); folders of live runs stay.
 * @returns the names of the folders removed; none when `dir` cannot be read.
 */
export async function removeDeadStages(dir: string, prefix: string): Promise<string[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => name.startsWith(prefix));
  const removed: string[] = [];
  for (const name of names) if ((await removeIfDead(join(dir, name))) === 'removed') removed.push(name);
  return removed;
}
