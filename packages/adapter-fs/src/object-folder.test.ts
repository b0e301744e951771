import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeStaleParts, STALE_PART_MS } from './object-folder.js';

describe('removeStaleParts', () => {
  const folders: string[] = [];
  afterEach(async () => {
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
});
