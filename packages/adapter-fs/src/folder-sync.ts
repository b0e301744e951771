import { open } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Windows refuses fsync on a folder (EPERM), so there folder entries are left to the file system. */
const CAN_SYNC_FOLDERS = process.platform !== 'win32';

/**
 * The folders whose entries changed when `mkdir(leaf, { recursive: true })`
 * created `first` (what it returned) and every folder below it down to
 * `leaf`: the parent of each created folder.
 */
export function parentsOfCreated(first: string | undefined, leaf: string): string[] {
  const parents: string[] = [];
  if (first === undefined) return parents;
  for (let folder = leaf; ; folder = dirname(folder)) {
    const parent = dirname(folder);
    parents.push(parent);
    if (folder === first || parent === folder) return parents;
  }
}

/** Fsyncs one folder, so that the entries created, renamed or removed in it survive a power loss. */
async function syncFolder(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Fsyncs each of `folders` once (a folder named twice is synced once), all at the same time. */
export async function syncFolders(folders: Iterable<string>): Promise<void> {
  if (!CAN_SYNC_FOLDERS) return;
  await Promise.all([...new Set(folders)].map(syncFolder));
}
