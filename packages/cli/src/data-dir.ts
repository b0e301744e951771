import { closeSync, existsSync, openSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { ServerConfig } from '@agentinfra/core';
import { CliError } from './cli-error.js';
import { DATABASE_NAME } from './commands/backup-manifest.js';
import { interruptedRestoreIn } from './commands/restore-target.js';
import { makeFolders } from './make-folders.js';

/** The SQLite file of the embedded default: `agentinfra.db` in `dataDir`. */
export function sqliteFileIn(dataDir: string): string {
  return join(dataDir, DATABASE_NAME);
}

/**
 * Creates the data directory with mode 0700 when it is missing (it holds
 * hashed keys, sealed secrets and mail); its parents get the usual mode. A
 * directory that exists keeps the mode the operator gave it.
 * @throws CliError (exit 2) naming the folder that cannot be created and why.
 */
export function ensureDataDir(dir: string): void {
  makeFolders(dir, 'the data directory', 0o700);
}

/**
 * Creates the SQLite file empty with mode 0600 when it is missing (SQLite
 * gives its `-wal` and `-shm` files the mode of the database), in a data
 * directory made by {@link ensureDataDir}. A file that exists keeps its mode.
 * @throws CliError (exit 2) when an interrupted `agentinfra restore` left its folder in the data
 *   directory: the database there may be missing, and would be created empty.
 */
export function ensureDatabaseFile(file: string): void {
  const dir = dirname(file);
  ensureDataDir(dir);
  const leftover = interruptedRestoreIn(dir);
  if (leftover) {
    throw new CliError(
      `the data directory ${dir} holds ${leftover}, left by an interrupted \`agentinfra restore\`: its database may be missing or ` +
        `incomplete. Empty the directory and run the restore again, or delete ${leftover} to use the directory as it is.`,
      2,
    );
  }
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * The SQLite file a command that reads an existing database (`backup`,
 * `audit verify`) works on. Opening a missing one would create an empty
 * database in its place and report on that.
 * @throws CliError (exit 2) naming the path, the config file and what to check, when the file does not exist.
 */
export function requireDatabaseFile(config: ServerConfig): string {
  const file = resolve(sqliteFileIn(config.core.dataDir));
  if (existsSync(file)) return file;
  const source = config.fileFound ? `config file ${config.file}` : `no config file at ${config.file}`;
  throw new CliError(
    `no database at ${file} (dataDir ${config.core.dataDir}; ${source}). Check --config (AGENTINFRA_CONFIG) and dataDir ` +
      '(AGENTINFRA_DATA_DIR), or run `agentinfra migrate` (or `serve`) first to create the database.',
    2,
  );
}
