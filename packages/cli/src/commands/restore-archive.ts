import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { CliError } from '../cli-error.js';
import { fileErrorReason } from '../fs-error.js';
import { type BackupFile, type BackupManifest, BLOB_OBJECTS, DATABASE_NAME, isBackupFilePath, MANIFEST_NAME } from './backup-manifest.js';

/** Largest `manifest.json` a restore reads into memory: over a million listed files. */
const MANIFEST_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Most bytes of `manifest.json` per byte of the archive read so far, past
 * {@link MANIFEST_RATIO_FLOOR_BYTES}. A manifest `backup` writes lists a
 * SHA-256 in hex for every ~200 bytes and compresses about 2.7 to 1; one
 * that inflates far more (padding, a decompression bomb) is refused while it
 * is read, before it takes memory in proportion.
 */
const MANIFEST_MAX_RATIO = 64;
/** Bytes of `manifest.json` read before {@link MANIFEST_MAX_RATIO} applies (a small manifest compresses better). */
const MANIFEST_RATIO_FLOOR_BYTES = 1024 * 1024;

/** Entry types that hold a regular file. */
const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

/** Every folder above a listed file (`blobs`, `blobs/objects`, `blobs/objects/ab`): the only folder entries a backup holds. */
function foldersOf(files: readonly BackupFile[]): Set<string> {
  const folders = new Set<string>();
  for (const { path } of files) {
    for (let end = path.indexOf('/'); end !== -1; end = path.indexOf('/', end + 1)) folders.add(path.slice(0, end));
  }
  return folders;
}

/**
 * Whether `path` is a folder of the blob store (`blobs`, `blobs/objects` or
 * one under it). Backups hold such a folder with no listed file in it when
 * a blob was deleted while they copied it: it is accepted, and not made.
 */
function isBlobFolder(path: string): boolean {
  return path === 'blobs' || path === BLOB_OBJECTS || (path !== DATABASE_NAME && isBackupFilePath(path));
}

/**
 * What stops the restore at one entry of the archive, or null when it may be
 * written: a file the manifest lists, not seen before, of exactly the listed
 * size; or a folder above one (or of the blob store, see
 * {@link isBlobFolder}). So no entry the manifest does not list is written,
 * nor more bytes than it lists in all.
 */
function refusal(
  entry: tar.ReadEntry,
  path: string,
  listed: ReadonlyMap<string, BackupFile>,
  folders: ReadonlySet<string>,
  seen: ReadonlySet<string>,
): CliError | null {
  const refuse = (what: string, why: string) => new CliError(`the backup holds ${what}, ${why}: refusing to restore.`, 1);
  if (entry.type === 'Directory') {
    return folders.has(path) || isBlobFolder(path) ? null : refuse(`the folder ${path}/`, 'which holds no file its manifest lists');
  }
  if (!FILE_TYPES.has(entry.type)) return refuse(path, `an entry of type ${entry.type}, which no backup holds`);
  const file = listed.get(path);
  if (!file) return refuse(path, 'which its manifest does not list');
  if (seen.has(path)) return refuse(path, 'twice');
  if (entry.size !== file.bytes) return refuse(path, `${entry.size} bytes long, where its manifest lists ${file.bytes}`);
  return null;
}

/** Writes one entry to `target`, a new file (never through an existing name), mode 0600, in folders made 0700. */
async function writeEntry(entry: tar.ReadEntry, target: string, signal: AbortSignal): Promise<void> {
  await mkdir(dirname(target), { recursive: true, mode: 0o700 });
  await pipeline(entry, createWriteStream(target, { flags: 'wx', mode: 0o600 }), { signal });
}

/**
 * Unpacks the backup at `file` into the empty folder `stage`, writing only
 * what its manifest lists. The first entry must be `manifest.json` (as
 * `backup` writes it) of at most {@link MANIFEST_MAX_BYTES}, inflating at
 * most {@link MANIFEST_MAX_RATIO} times (the only entry held in memory;
 * files stream to disk); `parse` checks
 * its text and returns the manifest, or throws to refuse the archive before
 * anything is written. Every later entry must be a file the manifest lists,
 * once and of the listed size, or a folder above one or of the blob store
 * (not made unless a file is written in it): the first that is not
 * stops the unpacking, with nothing of it written, so the stage never holds
 * more than the manifest's total bytes. Files are made new (a name the
 * archive repeats is refused, never written through), mode 0600, in folders
 * made 0700. Checksums are the caller's to verify. Settles once no write is
 * in flight, so the caller may then remove the stage.
 * @param from the archive as the operator named it, for messages.
 * @throws CliError exit 1 for an archive that cannot be read or unpacked (naming the reason), that
 *   does not begin with `manifest.json`, or that holds an entry refused above (naming it); what
 *   `parse` throws; a file system error of the stage as it came.
 */
export function unpackBackup(file: string, from: string, stage: string, parse: (text: string) => BackupManifest): Promise<BackupManifest> {
  const notBackup = (why: string) => new CliError(`${from} is not an agentinfra backup: ${why}.`, 1);
  const unreadable = (error: unknown) => new CliError(`${from} could not be unpacked: ${fileErrorReason(error)}`, 1);
  return new Promise((resolve, reject) => {
    const input = createReadStream(file);
    const parser = new tar.Parser({ strict: true });
    const aborted = new AbortController();
    const writes: Array<Promise<void>> = [];
    const seen = new Set<string>();
    let manifest: BackupManifest | undefined;
    let listed = new Map<string, BackupFile>();
    let folders = new Set<string>();
    let failure: unknown;
    let settling = false;
    let first = true;

    const settle = () => {
      if (settling) return;
      settling = true;
      void Promise.allSettled(writes).then(() => {
        if (failure !== undefined) reject(failure);
        else if (manifest) resolve(manifest);
        else reject(notBackup(`it holds no ${MANIFEST_NAME}`));
      });
    };
    const fail = (error: unknown) => {
      if (failure !== undefined) return;
      failure = error;
      aborted.abort();
      input.destroy();
      // Stops decompressing; what it emits ('error') is ignored from here on.
      parser.abort(error instanceof Error ? error : new Error(String(error)));
      settle();
    };

    parser.on('entry', (entry: tar.ReadEntry) => {
      if (failure !== undefined) return;
      try {
        if (first) {
          first = false;
          if (entry.path !== MANIFEST_NAME || !FILE_TYPES.has(entry.type)) {
            throw notBackup(`its first entry is ${JSON.stringify(entry.path)}, where a backup begins with ${MANIFEST_NAME}`);
          }
          if (entry.size > MANIFEST_MAX_BYTES) throw notBackup(`its ${MANIFEST_NAME} is larger than ${MANIFEST_MAX_BYTES} bytes`);
          // One buffer of the size the header gives, filled as it streams in, then decoded once.
          let text: Buffer | undefined = Buffer.allocUnsafe(entry.size);
          let filled = 0;
          entry.on('data', (chunk: Buffer) => {
            if (failure !== undefined || !text) return;
            if (filled + chunk.length > MANIFEST_RATIO_FLOOR_BYTES && filled + chunk.length > MANIFEST_MAX_RATIO * input.bytesRead) {
              text = undefined;
              fail(notBackup(`its ${MANIFEST_NAME} inflates more than ${MANIFEST_MAX_RATIO} times, which no backup's does`));
              return;
            }
            filled += chunk.copy(text, filled);
          });
          // Runs before the parser emits the next entry.
          entry.on('end', () => {
            if (failure !== undefined || !text) return;
            try {
              const decoded = text.toString('utf8', 0, filled);
              text = undefined;
              manifest = parse(decoded);
              listed = new Map(manifest.files.map((listedFile) => [listedFile.path, listedFile]));
              folders = foldersOf(manifest.files);
            } catch (error) {
              fail(error);
            }
          });
          return;
        }
        const path = entry.path.replace(/\/+$/, '');
        const refused = refusal(entry, path, listed, folders, seen);
        if (refused) throw refused;
        if (entry.type === 'Directory') {
          // Made with the files under it, if any.
          entry.resume();
          return;
        }
        seen.add(path);
        writes.push(writeEntry(entry, join(stage, path), aborted.signal).catch(fail));
      } catch (error) {
        fail(error);
      }
    });
    parser.on('ignoredEntry', (entry: tar.ReadEntry) => {
      fail(new CliError(`the backup holds ${entry.path}, an entry of type ${entry.type}, which no backup holds: refusing to restore.`, 1));
    });
    parser.on('error', (error: Error) => fail(unreadable(error)));
    input.on('error', (error) => fail(unreadable(error)));
    parser.on('end', settle);
    input.pipe(parser);
  });
}
