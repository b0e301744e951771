import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createObjectFolder, removeStaleParts, STALE_PART_MS, STALE_PART_SWEEP_MS } from './object-folder.js';

describe('removeStaleParts', () => {
  const folders: string[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
  });

  it('removes temp files of writes that stopped over an hour ago, and keeps writes in progress and other files', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'agentinfra-parts-'));
    folders.push(tmp);
    const now = Date.now();
    await writeFile(join(tmp, 'crashed.part'), 'half an upload');
    const stale = new Date(now - STALE_PART_MS - 60_000);
    await utimes(join(tmp, 'crashed.part'), stale, stale);
    await writeFile(join(tmp, 'uploading.part'), 'still arriving');
    await writeFile(join(tmp, 'notes.txt'), 'not a temp file');
    await utimes(join(tmp, 'notes.txt'), stale, stale);

    expect(await removeStaleParts(tmp, now)).toBe(1);
    expect((await readdir(tmp)).sort()).toEqual(['notes.txt', 'uploading.part']);
    expect(await removeStaleParts(join(tmp, 'missing'), now)).toBe(0);
  });

  // Review: stale temp files were looked for once, at start, so those a killed process left less than an hour
  // before stayed until the next restart.
  it('looks again while the folder is in use, until it is closed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentinfra-parts-'));
    folders.push(dir);
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const folder = createObjectFolder({ dir, durable: false });
    const part = join(dir, 'tmp', 'killed.part');
    const makeStale = async () => {
      await writeFile(part, 'half an upload');
      const stale = new Date(Date.now() - STALE_PART_MS - 60_000);
      await utimes(part, stale, stale);
    };
    // Made once the first look, at start, has found nothing.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await makeStale();
    expect(await readdir(join(dir, 'tmp'))).toEqual(['killed.part']);
    await vi.advanceTimersByTimeAsync(STALE_PART_SWEEP_MS);
    await expect.poll(() => readdir(join(dir, 'tmp'))).toEqual([]);

    folder.close();
    await makeStale();
    await vi.advanceTimersByTimeAsync(STALE_PART_SWEEP_MS * 2);
    expect(await readdir(join(dir, 'tmp'))).toEqual(['killed.part']);
  });
});
