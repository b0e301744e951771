import { chmod, readdir, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { quickCheckFile } from '@agentinfra/adapter-sqlite';
import { migrationSetsOf } from '@agentinfra/core';
import { defaultModules } from '@agentinfra/modules';
import { CliError } from '../cli-error.js';
import { fileErrorReason } from '../fs-error.js';
import { loadConfigOrExit } from '../server.js';
import { requireEmbeddedDefault } from './backup.js';
import {
  type BackupManifest,
  BLOB_OBJECTS,
  backupManifestSchema,
  DATABASE_NAME,
  fileDigest,
  MANIFEST_NAME,
  MASTER_KEY_NOTICE,
} from './backup-manifest.js';
import { withProgress } from './progress.js';
import { unpackBackup } from './restore-archive.js';
import { openRestoreTarget } from './restore-target.js';

/**
 * Refuses a backup made by a newer build: one whose migration tables record
 * migrations this build does not have (it could not serve that database).
 * @throws CliError (exit 2) naming the table and the migrations.
 */
function refuseNewerBackup(manifest: BackupManifest, from: string): void {
  for (const set of migrationSetsOf(defaultModules)) {
    const newer = (manifest.migrations[set.table] ?? []).filter((name) => !(name in set.migrations));
    if (newer.length === 0) continue;
    throw new CliError(
      `${from} was made by a newer agentinfra (${manifest.version}): its ${set.table} records ${newer.join(', ')}, which this build ` +
        'does not know, so it could not serve the restored database. Restore it with that version or a later one.',
      2,
    );
  }
}

/**
 * The manifest of the archive `from`, from the text of its `manifest.json`,
 * whose files are to be unpacked into `stage`.
 * @throws CliError exit 1 for one that is not JSON or not what `backup` writes (naming a listed path
 *   no backup holds, or the rule a file list breaks); exit 2 for a backup made by a newer build.
 */
function parseManifest(text: string, from: string, stage: string): BackupManifest {
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  const parsed = json === null ? null : backupManifestSchema.safeParse(json);
  if (!parsed?.success) {
    // A file list no backup writes (a path reaching outside the data directory, no database): say which.
    const issue = parsed?.error.issues.find((candidate) => candidate.path[0] === 'files');
    const listed =
      issue?.path[1] === undefined ? undefined : (json as { files: Array<{ path?: unknown }> }).files[Number(issue.path[1])]?.path;
    if (issue && issue.path.at(-1) === 'path' && typeof listed === 'string') {
      throw new CliError(
        `${from} is not an agentinfra backup: its ${MANIFEST_NAME} lists ${JSON.stringify(listed)}, but a backup holds only ` +
          `${DATABASE_NAME} and files under ${BLOB_OBJECTS}/: refusing to restore.`,
        1,
      );
    }
    if (issue && issue.path.length === 1) {
      throw new CliError(`${from} is not an agentinfra backup: its ${MANIFEST_NAME} ${issue.message}: refusing to restore.`, 1);
    }
    throw new CliError(`${from} is not an agentinfra backup (no valid ${MANIFEST_NAME}).`, 1);
  }
  // The schema admits only agentinfra.db and blobs/objects/…; check again before the paths are joined to the stage.
  const outside = parsed.data.files.find((file) => !resolve(stage, file.path).startsWith(`${resolve(stage)}${sep}`));
  if (outside)
    throw new CliError(`the backup's manifest lists ${JSON.stringify(outside.path)}, outside the data directory: refusing to restore.`, 1);
  refuseNewerBackup(parsed.data, from);
  return parsed.data;
}

/**
 * Checks every file of the manifest against its size and SHA-256 (the
 * unpacking wrote nothing else).
 * @throws CliError (exit 1) naming the first file that is missing or altered.
 */
async function verifyFiles(stage: string, manifest: BackupManifest): Promise<void> {
  await withProgress('verifying checksums', 'files', async (update) => {
    for (const [index, file] of manifest.files.entries()) {
      const actual = await fileDigest(join(stage, file.path)).catch(() => null);
      if (actual === null) throw new CliError(`the backup lacks ${file.path}, which its manifest lists: refusing to restore.`, 1);
      if (actual.sha256 !== file.sha256 || actual.bytes !== file.bytes) {
        throw new CliError(`checksum mismatch for ${file.path}: the backup is damaged, refusing to restore.`, 1);
      }
      update(index + 1, manifest.files.length);
    }
  });
}

/**
 * Runs SQLite's `PRAGMA quick_check` on the unpacked database, read-only
 * (see `quickCheckFile` of the SQLite adapter: the file whose checksum was just verified is
 * left byte for byte as it is), so that a file the manifest lists under
 * that name (and whose checksum it gives) but that is no sound SQLite
 * database is refused before anything is moved into place.
 * @throws CliError (exit 1) with SQLite's first finding.
 */
async function checkDatabase(path: string, from: string): Promise<void> {
  const refuse = (finding: string) =>
    new CliError(`${from} holds an ${DATABASE_NAME} that is not a sound SQLite database (${finding}): refusing to restore.`, 1);
  let findings: string[];
  try {
    findings = await quickCheckFile(path);
  } catch (error) {
    throw refuse(error instanceof Error ? error.message : String(error));
  }
  if (findings.length !== 1 || findings[0] !== 'ok') throw refuse(findings[0] ?? 'no answer to quick_check');
}

/** Every folder under `dir`, as absolute paths. */
async function listFolders(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isDirectory()).map((entry) => join(entry.parentPath, entry.name));
}

/**
 * `agentinfra restore --from FILE`: unpacks a backup made by `agentinfra
 * backup` into the configured data directory, which must be missing or
 * empty, after checking every file against the manifest's SHA-256. The
 * manifest (the archive's first entry) is read first, and only the files it
 * lists, each of its listed size, are written (see {@link unpackBackup});
 * the database must then pass SQLite's `quick_check`. The files
 * are unpacked into a hidden folder inside the data directory and moved into
 * place only once all of them verify, so a failed restore leaves the
 * directory as it found it; one killed midway leaves that folder, which
 * `serve` then names and the next restore removes or names (see {@link openRestoreTarget}). Every
 * restored folder ends up mode 0700, every file 0600; a data directory the
 * restore makes is 0700, one that exists keeps its owner and mode. `serve`
 * then starts on it with the same master key as the backed-up server.
 * @throws CliError exit 2 for PostgreSQL or S3 configurations, a data directory that is not an empty
 *   folder or cannot be written, or a backup made by a newer build (migrations this build does not
 *   know); exit 1 for a missing, foreign or damaged archive (an entry its manifest does not list, or
 *   not of the listed size, a database SQLite finds unsound), or a failure while unpacking.
 */
export async function runRestore(options: { config?: string; from: string }): Promise<void> {
  const config = loadConfigOrExit({ file: options.config });
  requireEmbeddedDefault(config.core, 'restore');
  const from = resolve(options.from);
  if (!(await stat(from).catch(() => null))) throw new CliError(`no backup at ${options.from}.`, 1);
  const dataDir = resolve(config.core.dataDir);
  const target = await openRestoreTarget(dataDir);
  const { stage } = target;
  let manifest: BackupManifest;
  try {
    // Only regular files the manifest lists, with their sizes, and their folders: never a link, nor anything unlisted.
    manifest = await unpackBackup(from, options.from, stage, (text) => parseManifest(text, options.from, stage));
    await verifyFiles(stage, manifest);
    await checkDatabase(join(stage, DATABASE_NAME), options.from);
    // Made 0600 and 0700, less what the umask takes: the database and blobs are the operator's alone.
    for (const file of manifest.files) await chmod(join(stage, file.path), 0o600);
    for (const folder of await listFolders(stage)) await chmod(folder, 0o700);
  } catch (error) {
    await target.abandon();
    if (error instanceof CliError) throw error;
    throw new CliError(`could not restore into ${dataDir}: ${fileErrorReason(error)}.`, 1);
  }
  await target.commit();
  const rows = Object.values(manifest.counts).reduce((sum, count) => sum + count, 0);
  process.stdout.write(
    `restored ${options.from} (made ${manifest.created_at} by agentinfra ${manifest.version}) into ${dataDir}: ` +
      `${rows} rows, ${manifest.files.length - 1} blobs, every checksum verified\n`,
  );
  process.stdout.write(`${MASTER_KEY_NOTICE}\nStart it with \`agentinfra serve\` using the master key of the backed-up server.\n`);
}
