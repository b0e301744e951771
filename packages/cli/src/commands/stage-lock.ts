import { existsSync, type Stats } from 'node:fs';
import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type ServeLock, takeServeLock } from '@agentinfra/adapter-sqlite';
import { CliError } from '../cli-error.js';

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
 * @throws CliError (exit 1) when `stage` is gone (this run was stopped past {@link UNLOCKED_STAGE_GRACE_MS}
 *   before locking it and another run removed it); Error when the lock file cannot be made, or another process holds it.
 */
export function lockStage(stage: string): ServeLock {
  let lock: ServeLock | null;
  try {
    lock = takeServeLock({ filename: join(stage, LOCK_BASE) });
  } catch (error) {
    if (!existsSync(stage)) {
      throw new CliError(
        `${stage}, the folder this run made, was removed before the run could lock it: the run was stopped for more than ` +
          `${UNLOCKED_STAGE_GRACE_MS / 1000} s in between, and another run took the folder for one a killed run left. ` +
          'Nothing was written; run the command again.',
        1,
      );
    }
    throw error;
  }
  if (!lock) throw new Error(`${stage} is in use by another process`);
  return lock;
}

/**
 * How long, in milliseconds since it last changed, a staging folder in which
 * no lock was ever taken is presumed to belong to a run still starting. A
 * run locks its folder right after making it (no I/O between the two), so
 * only a run killed (or stopped) in between leaves one older than this.
 */
export const UNLOCKED_STAGE_GRACE_MS = 60_000;

/** What {@link removeIfDead} found: `removed` (its run had ended), `live` (its run holds the lock), `unknown` (left). */
export type StageState = 'removed' | 'live' | 'unknown';

/**
 * Whether `folder`, in which no lock was ever taken, was left by a run
 * killed between making it and locking it: it holds nothing but (empty) lock
 * files, as such a run leaves it, and last changed at least
 * {@link UNLOCKED_STAGE_GRACE_MS} before `now` (ms since the epoch). One
 * holding anything else was made by an older version, which took no lock.
 */
async function abandonedBeforeLocking(folder: string, info: Stats, now: number): Promise<boolean> {
  if (now - info.mtimeMs < UNLOCKED_STAGE_GRACE_MS) return false;
  const names = await readdir(folder).catch(() => null);
  return names?.every((name) => STAGE_LOCK_FILES.includes(name)) === true;
}

/**
 * Removes the staging folder `folder` when the run that made it has ended:
 * either its lock file holds a lock once taken (SQLite wrote it while holding
 * the lock) that can be taken again, or no lock was ever taken in it and it
 * was abandoned before that ({@link abandonedBeforeLocking}). Either way the
 * folder is removed while holding its lock, so a run that made it and was
 * stopped past the grace period before locking it fails when it goes on (it
 * cannot take the lock, or finds its folder gone) rather than stage into a
 * folder another run removes. A folder whose lock a live run holds, one made by
 * an older version or by a run still starting (no lock taken, changed less
 * than {@link UNLOCKED_STAGE_GRACE_MS} ago), or one that cannot be read or
 * removed, is left as it is.
 * @param now the current time in ms since the epoch (for the grace period).
 */
export async function removeIfDead(folder: string, now: number = Date.now()): Promise<StageState> {
  const lockFile = join(folder, STAGE_LOCK_FILES[0] as string);
  const [info, file] = await Promise.all([lstat(folder).catch(() => null), lstat(lockFile).catch(() => null)]);
  if (!info?.isDirectory() || (file !== null && !file.isFile())) return 'unknown';
  const lockTaken = file !== null && file.size > 0;
  if (!lockTaken && !(await abandonedBeforeLocking(folder, info, now))) return 'unknown';
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
