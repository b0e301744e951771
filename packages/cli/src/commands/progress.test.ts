import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withProgress } from './progress.js';

// CI: a restore refused half-way (checksum mismatch) left cli-progress's timer running, and its line landed
// in the stderr of a later command run in the same process.
describe('withProgress', () => {
  const written: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    written.length = 0;
  });
  function captureStderr(): void {
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  }

  it('stops redrawing the bar when the work throws half-way', async () => {
    captureStderr();
    const work = withProgress(
      'checking',
      'files',
      async (update) => {
        update(1, 3);
        throw new Error('damaged');
      },
      { intervalMs: 5 },
    );
    await expect(work).rejects.toThrow('damaged');
    const lines = written.length;
    await sleep(60);
    expect(written.length).toBe(lines);
  });

  it('returns what the work returns and reports the count it was given', async () => {
    captureStderr();
    const result = await withProgress(
      'copying',
      'files',
      async (update) => {
        update(2, 2);
        return 'done';
      },
      { intervalMs: 5 },
    );
    expect(result).toBe('done');
    expect(written.join('')).toContain('copying: ');
    expect(written.join('')).toContain('2/2 files');
  });
});
