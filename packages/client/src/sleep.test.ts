import { describe, expect, it } from 'vitest';
import { sleep } from './sleep.js';

// Regression: with a signal that had already aborted, sleep waited out the whole delay (a Retry-After).
describe('sleep', () => {
  it('rejects with aborted at once when the signal has already aborted', async () => {
    const started = performance.now();
    await expect(sleep(20_000, AbortSignal.abort('stop'))).rejects.toMatchObject({ status: 0, code: 'aborted', cause: 'stop' });
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
