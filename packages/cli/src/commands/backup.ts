import { createWriteStream } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, mkdtemp, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createSqliteDatabase, type ServeLock } from '@agentinfra/adapter-sqlite';
import type { CoreConfig } from '@agentinfra/core';
import * as tar from 'tar';
import { CliError } from '../cli-error.js';
import { requireDatabaseFile } from '../data-dir.js';
import { loadConfigOrExit } from '../server.js';
import {
  BACKUP_FORMAT,
  type BackupFile,
  type BackupManifest,
  BLOB_OBJECTS,
  DATABASE_NAME,
  EXTERNAL_BACKUP_DOCS,
  fileDigest,
  MANIFEST_NAME,
  MASTER_KEY_NOTICE,
} from './backup-manifest.js';
import { withProgress } from './progress.js';
import { lockStage, removeDeadStages } from './stage-lock.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * Refuses configurations whose data is not in the data directory.
 * @throws CliError (exit 2) naming the engine and where its procedure is written down.
 */
export function requireEmbeddedDefault(config: CoreConfig, command: 'backup' | 'restore'): void {
  const external = [config.databaseUrl ? 'PostgreSQL' : null, config.s3 ? 'S3' : null].filter(Boolean).join(' and ');
  if (external) {
    throw new CliError(
      `${command} covers the embedded default (SQLite and the blob folder); this server uses ${external}. ` +
        `Use pg_dump/pg_restore and your bucket's replication or versioning as described in ${EXTERNAL_BACKUP_DOCS}.`,
      2,
    );
  }
}

/** Every file under `dir` (relative paths with `/`), or none when it does not exist. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

/**
 * Takes the online snapshot of the database into `target` (`VACUUM INTO`:
 * one read transaction, so the copy is consistent while the server keeps
 * writing in WAL mode), then reads its migration state and row counts.
 */
async function snapshotDatabase(source: string, target: string): Promise<Pick<BackupManifest, 'migrations' | 'counts'>> {
  const live = createSqliteDatabase({ filename: source });
  try {
    await live.knex.raw('VACUUM INTO ?', [target]);
  } finally {
    await live.close();
  }
  const snapshot = createSqliteDatabase({ filename: target });
  try {
    const tables = (await snapshot
      .knex('sqlite_master')
      .select('name', 'sql')
      .where('type', 'table')
      .whereNot('name', 'like', 'sqlite_%')
      .orderBy('name')) as Array<{ name: string; sql: string | null }>;
    const counts: Record<string, number> = {};
    const migrations: Record<string, string[]> = {};
    for (const { name, sql } of tables) {
      if (sql?.toUpperCase().startsWith('CREATE VIRTUAL')) continue;
      const row = (await snapshot.knex(name).count({ count: '*' }).first()) as { count: number | string };
      counts[name] = Number(row.count);
      if (name.endsWith('_migrations')) {
        migrations[name] = ((await snapshot.knex(name).select('name').orderBy('id')) as Array<{ name: string }>).map((m) => m.name);
      }
    }
    return { migrations, counts };
  } finally {
    await snapshot.close();
  }
}

/**
 * Copies the blob objects (raw mail, artifacts) into the staging folder,
 * after the database snapshot: every object a row of the snapshot refers to
 * was stored before that row was committed, so it is there. Objects deleted
 * meanwhile are skipped (and the folder made for one removed when it holds
 * no other); writes in progress (`blobs/tmp`) are not copied.
 */
async function copyBlobs(dataDir: string, stage: string): Promise<BackupFile[]> {
  const source = join(dataDir, BLOB_OBJECTS);
  const names = await listFiles(source);
  const files: BackupFile[] = [];
  await withProgress('copying blobs', 'files', async (update) => {
    for (const [index, name] of names.entries()) {
      const target = join(stage, BLOB_OBJECTS, name);
      await mkdir(dirname(target), { recursive: true });
      try {
        await copyFile(join(source, name), target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        // Deleted meanwhile: leave no folder that holds no listed file (unless others were copied into it).
        await rmdir(dirname(target)).catch(() => undefined);
        continue;
      }
      files.push({ path: `${BLOB_OBJECTS}/${name}`, ...(await fileDigest(target)) });
      update(index + 1, names.length);
    }
  });
  return files;
}

/**
 * Name of the archive inside the staging folder while it is written; none
 * of the entries (`manifest.json`, `agentinfra.db`, `blobs`).
 */
const ARCHIVE_IN_STAGE = 'archive.tar.gz.partial';

/** Start of the name of the hidden staging folder, next to the output file. */
const STAGE_PREFIX = '.agentinfra-backup-';

/**
 * Writes the gzipped tar of `entries` (the manifest first, so `restore`
 * reads it before anything else) to `archive`, a new file made mode 0600
 * (`wx`: it fails on any existing name, a symbolic link included, rather
 * than write through it), so it is never readable by others.
 */
async function writeArchive(stage: string, entries: string[], archive: string): Promise<void> {
  await pipeline(
    tar.create({ gzip: true, cwd: stage, portable: true }, entries),
    createWriteStream(archive, { flags: 'wx', mode: 0o600, flush: true }),
  );
  // The umask may have taken bits from 0600 (never added any).
  await chmod(archive, 0o600);
}

/**
 * `agentinfra backup --out FILE`: a consistent snapshot of the embedded
 * default while the server runs: the SQLite database, the blob objects and
 * `manifest.json` (format, version, migrations, row counts, SHA-256 of every
 * file; the archive's first entry) in a gzipped tar, mode 0600 from its
 * first byte. Everything is staged in a new hidden folder next to `FILE`
 * (`.agentinfra-backup-…`, mode 0700, removed at the end), the archive
 * included, which is renamed to `FILE` once complete: no other user can
 * open it while it is written, and no name an earlier run or another user
 * left (`FILE.partial`, a symbolic link) is ever written through. The run
 * holds a lock in that folder while it lives (see {@link lockStage}): a
 * backup killed midway leaves the folder behind, with part of the database,
 * and the next backup into the same folder removes it (saying so on
 * stderr), never one a live backup is using. The master key is not
 * included (the command says so).
 * @throws CliError exit 2 for PostgreSQL or S3 configurations (see docs/operations.md), an existing
 *   `FILE` (a symbolic link included), or no database file in the data directory (it is never created here).
 */
export async function runBackup(options: { config?: string; out: string }): Promise<void> {
  const config = loadConfigOrExit({ file: options.config });
  requireEmbeddedDefault(config.core, 'backup');
  const out = resolve(options.out);
  if (await lstat(out).catch(() => null)) throw new CliError(`${options.out} already exists; choose a new file name.`, 2);
  const database = requireDatabaseFile(config);
  const dataDir = dirname(database);

  await mkdir(dirname(out), { recursive: true });
  for (const name of await removeDeadStages(dirname(out), STAGE_PREFIX)) {
    process.stderr.write(`removed ${join(dirname(out), name)}, left by a backup killed midway\n`);
  }
  const stage = await mkdtemp(join(dirname(out), STAGE_PREFIX));
  let lock: ServeLock | undefined;
  try {
    lock = lockStage(stage);
    process.stderr.write(`snapshotting ${database}\n`);
    const state = await snapshotDatabase(database, join(stage, DATABASE_NAME));
    const files = [{ path: DATABASE_NAME, ...(await fileDigest(join(stage, DATABASE_NAME))) }, ...(await copyBlobs(dataDir, stage))];
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version,
      created_at: new Date().toISOString(),
      ...state,
      files,
      master_key_included: false,
    };
    await writeFile(join(stage, MANIFEST_NAME), `${JSON.stringify(manifest, null, 2)}\n`);
    const archive = join(stage, ARCHIVE_IN_STAGE);
    await writeArchive(stage, [MANIFEST_NAME, DATABASE_NAME, ...(files.length > 1 ? ['blobs'] : [])], archive);
    await rename(archive, out);
    const bytes = files.reduce((sum, file) => sum + file.bytes, 0);
    const rows = Object.values(state.counts).reduce((sum, count) => sum + count, 0);
    process.stdout.write(
      `backup written to ${out}: database (${rows} rows in ${Object.keys(state.counts).length} tables) and ${files.length - 1} blobs, ` +
        `${bytes} bytes before compression\n${MASTER_KEY_NOTICE}\n`,
    );
  } finally {
    await rm(stage, { recursive: true, force: true });
    lock?.release();
  }
}
