import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { z } from 'zod';

/** Format tag of the archives `agentinfra backup` writes; `restore` refuses any other. */
export const BACKUP_FORMAT = 'agentinfra-backup/1';
/** Name of the manifest inside the archive. */
export const MANIFEST_NAME = 'manifest.json';
/** Name of the SQLite snapshot inside the archive (and in the data directory). */
export const DATABASE_NAME = 'agentinfra.db';
/** Folder of blob objects inside the archive, as under the data directory (`blobs/objects/…`). */
export const BLOB_OBJECTS = 'blobs/objects';

/**
 * Whether `path` is one `backup` writes: exactly `agentinfra.db`, or a file
 * under `blobs/objects/`, relative, with `/` separators and no empty, `.` or
 * `..` segment, backslash or NUL. `restore` joins these paths to its staging
 * folder, so anything else could reach outside it.
 */
export function isBackupFilePath(path: string): boolean {
  if (path === DATABASE_NAME) return true;
  if (/[\\\0]/.test(path) || !path.startsWith(`${BLOB_OBJECTS}/`)) return false;
  return path
    .slice(BLOB_OBJECTS.length + 1)
    .split('/')
    .every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** One file of the archive: path relative to the data directory, size in bytes, hex SHA-256. */
export const backupFileSchema = z.object({
  path: z.string().refine(isBackupFilePath, `must be ${DATABASE_NAME} or a file under ${BLOB_OBJECTS}/`),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
/** See {@link backupFileSchema}. */
export type BackupFile = z.infer<typeof backupFileSchema>;

/**
 * `manifest.json`: what the archive holds and how to check it. `migrations`
 * are the names applied per migrations table, `counts` the rows per table of
 * the snapshot, `files` every file besides the manifest (the database first).
 */
export const backupManifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  /** Version of the agentinfra CLI that wrote it. */
  version: z.string(),
  created_at: z.string(),
  migrations: z.record(z.string(), z.array(z.string())),
  counts: z.record(z.string(), z.number().int().min(0)),
  files: z
    .array(backupFileSchema)
    .min(1)
    .refine((files) => files.some((file) => file.path === DATABASE_NAME), `must list ${DATABASE_NAME}`)
    .refine((files) => new Set(files.map((file) => file.path)).size === files.length, 'must list each file once'),
  /** Always false: secrets in the database open only with the master key kept elsewhere. */
  master_key_included: z.literal(false),
});
/** See {@link backupManifestSchema}. */
export type BackupManifest = z.infer<typeof backupManifestSchema>;

/** Hex SHA-256 and size of a file, streamed. */
export async function fileDigest(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Where the procedure for the external engines is written down. */
export const EXTERNAL_BACKUP_DOCS = 'docs/operations.md, "Backup and restore"';

/** What the operator must keep besides the archive (printed by `backup` and `restore`). */
export const MASTER_KEY_NOTICE =
  'The master key is NOT in the backup: without it the stored secrets (agent secrets, webhook and job signing secrets, ' +
  'WireGuard and certificate keys) cannot be opened. Keep AGENTINFRA_MASTER_KEY (the masterKey of agentinfra.config.json) ' +
  'in your password manager or secret store, apart from the backup file.';
