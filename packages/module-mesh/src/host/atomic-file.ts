import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Writes `data` to a new temp file beside `target` with mode 0600 and flushes it to disk. @returns the temp path. */
async function writeTempFile(target: string, data: string): Promise<string> {
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  return temp;
}

/** Flushes a directory entry change (rename, link) to disk where the platform allows it. */
async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r').catch(() => undefined);
  await handle?.sync().catch(() => undefined);
  await handle?.close();
}

/**
 * Creates `file` holding `data` (mode 0600) all at once, never replacing a
 * file that exists or appears meanwhile (temp file, fsync, hard link).
 * @returns `false` when `file` already existed (it is left as it was).
 */
export async function createFileOnce(file: string, data: string): Promise<boolean> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = await writeTempFile(file, data);
  try {
    await link(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temp);
  }
  await syncDirectory(dirname(file));
  return true;
}

/**
 * Writes `text` to `file` atomically (temp file, fsync, rename) with mode
 * 0600, unless the file already holds exactly `text` (then only its mode
 * is fixed).
 * @returns whether the content changed.
 */
export async function writeConfigFile(file: string, text: string): Promise<boolean> {
  const current = await readFile(file, 'utf8').catch(() => undefined);
  if (current === text) {
    if (((await stat(file)).mode & 0o777) !== 0o600) await chmod(file, 0o600);
    return false;
  }
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = await writeTempFile(file, text);
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(file));
  return true;
}
