import { readdirSync } from 'node:fs';
import { chown, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServeLock } from '@agentinfra/adapter-sqlite';
import { CliError } from '../cli-error.js';
import { fileErrorReason } from '../fs-error.js';
import { makeFolders } from '../make-folders.js';
import { DATABASE_NAME } from './backup-manifest.js';
import { lockStage, removeIfDead, STAGE_LOCK_FILES } from './stage-lock.js';

/** Start of the name of the hidden folder, inside the data directory, that a restore unpacks into. */
const STAGE_PREFIX = '.agentinfra-restore-';

/**
 * The folder an interrupted restore left in `dataDir` (killed before it
 * moved every file into place, so the database may be missing), or null.
 */
export function interruptedRestoreIn(dataDir: string): string | null {
  let entries: string[];
  try {
    entries = readdirSync(dataDir);
  } catch {
    return null;
  }
  return entries.find((name) => name.startsWith(STAGE_PREFIX)) ?? null;
}

/** The data directory a restore writes into, and the hidden folder inside it that the backup is unpacked into. */
export interface RestoreTarget {
  stage: string;
  /**
   * Moves what is in the stage into the data directory, the database last
   * (not the stage's lock files), and removes the stage. Run as root, it
   * first gives every file the data directory's owner, who serves it.
   */
  commit(): Promise<void>;
  /** Removes the stage, and the data directory when the restore made it. */
  abandon(): Promise<void>;
}

/**
 * Prepares `dataDir` for a restore: it must be missing (it is then made, mode
 * 0700) or an empty folder; a folder that exists (a mount point, the target
 * of a symbolic link, one owned by the service's user) stays as it is, with
 * its owner and mode. The backup is unpacked into a hidden folder inside it
 * rather than next to it, so the data directory's parent may be read-only.
 * The run holds a lock in that folder while it lives (see {@link lockStage}):
 * one that a restore killed before moving any file left, alone in the data
 * directory, is removed, and this restore goes on.
 * @throws CliError (exit 2) when the data directory is not a folder, is not empty (naming a folder left
 *   by an interrupted restore, or one another restore is writing), or cannot be made or written.
 */
export async function openRestoreTarget(dataDir: string): Promise<RestoreTarget> {
  const cannot = (what: string, error: unknown) =>
    new CliError(`cannot ${what} the data directory ${dataDir}: ${fileErrorReason(error)}.`, 2);
  let existing: string[] = [];
  try {
    existing = await readdir(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') throw new CliError(`the data directory ${dataDir} is not a folder: restore only into a folder.`, 2);
    if (code !== 'ENOENT') throw cannot('read', error);
  }
  let leftover = existing.find((name) => name.startsWith(STAGE_PREFIX));
  if (leftover) {
    const state = existing.length === 1 ? await removeIfDead(join(dataDir, leftover)) : 'unknown';
    if (state === 'live') throw new CliError(`the data directory ${dataDir} holds ${leftover}, which a running restore is writing.`, 2);
    if (state === 'removed') {
      existing = [];
      leftover = undefined;
    }
  }
  if (leftover) {
    throw new CliError(
      `the data directory ${dataDir} holds ${leftover}, left by an interrupted restore: empty the directory and run the restore again.`,
      2,
    );
  }
  if (existing.length > 0) throw new CliError(`the data directory ${dataDir} is not empty: restore only into a new or empty directory.`, 2);
  const created = makeFolders(dataDir, 'the data directory', 0o700);
  let stage: string;
  try {
    stage = await mkdtemp(join(dataDir, STAGE_PREFIX));
  } catch (error) {
    if (created) await rm(dataDir, { recursive: true, force: true });
    throw cannot('write into', error);
  }
  let lock: ServeLock;
  try {
    lock = lockStage(stage);
  } catch (error) {
    await rm(created ? dataDir : stage, { recursive: true, force: true });
    throw cannot('write into', error);
  }
  return {
    stage,
    async abandon() {
      await rm(created ? dataDir : stage, { recursive: true, force: true });
      lock.release();
    },
    async commit() {
      try {
        const owner = await stat(dataDir);
        if (process.getuid?.() === 0) {
          for (const entry of await readdir(stage, { recursive: true })) await chown(join(stage, entry), owner.uid, owner.gid);
        }
        const names = (await readdir(stage))
          .filter((name) => !STAGE_LOCK_FILES.includes(name))
          .sort((a, b) => Number(a === DATABASE_NAME) - Number(b === DATABASE_NAME));
        for (const name of names) await rename(join(stage, name), join(dataDir, name));
        await rm(stage, { recursive: true, force: true });
        lock.release();
      } catch (error) {
        throw new CliError(
          `the restore stopped while moving the files into ${dataDir} (${fileErrorReason(error)}): empty the directory and run the restore again.`,
          1,
        );
      }
    },
  };
}
