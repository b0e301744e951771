import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { CliError } from './cli-error.js';
import { fileErrorReason } from './fs-error.js';

/**
 * Creates `dir` and its missing parents one level at a time, as `mkdir -p`,
 * the last one with `mode` (the others with the usual mode). Node's
 * recursive mkdir loops forever where a parent exists but takes no new
 * folder (`/proc/x/y`); this stops at the first refusal.
 * @param purpose what the folder is for, for the error (`/srv/agentinfra.config.json`, `the data directory`).
 * @returns whether `dir` was created (it did not exist).
 * @throws CliError (exit 2) naming the folder that cannot be created and why.
 */
export function makeFolders(dir: string, purpose: string, mode?: number): boolean {
  const missing: string[] = [];
  for (let folder = resolve(dir); !existsSync(folder); folder = dirname(folder)) missing.unshift(folder);
  for (const folder of missing) {
    try {
      mkdirSync(folder, { mode: folder === missing.at(-1) ? mode : undefined });
    } catch (error) {
      // Made meanwhile by another process: as good as made here.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(folder, { throwIfNoEntry: false })?.isDirectory()) continue;
      // ENOENT with the parent in place: a file system that takes no folders there (/proc, /sys).
      const reason =
        (error as NodeJS.ErrnoException).code === 'ENOENT' ? `${dirname(folder)} takes no new folders` : fileErrorReason(error);
      throw new CliError(`cannot create the folder ${folder} for ${purpose}: ${reason}.`, 2);
    }
  }
  return missing.length > 0;
}
