import { describe, expect, it } from 'vitest';
import { createStressMode } from './stress-mode.js';

describe('SMTP stress mode', () => {
  const watched = (idleTimeoutMs: number, stressIdleTimeoutMs: number) => {
    const applied: number[] = [];
    const changes: boolean[] = [];
    const mode = createStressMode({
      maxClients: 8,
      idleTimeoutMs,
      stressIdleTimeoutMs,
      applyIdleTimeout: (timeoutMs) => applied.push(timeoutMs),
      changed: (stressed) => changes.push(stressed),
    });
    return { mode, applied, changes };
  };

  it('enters at 3/4 of maxClients and leaves below 1/2, applying each timeout once', () => {
    const { mode, applied, changes } = watched(60_000, 10_000);
    for (const open of [1, 2, 3, 4, 5]) mode.update(open);
    expect(mode.stressed).toBe(false);
    mode.update(6);
    mode.update(7);
    expect(mode.stressed).toBe(true);
    for (const open of [6, 5, 4]) mode.update(open);
    expect(mode.stressed).toBe(true);
    mode.update(3);
    expect(mode.stressed).toBe(false);
    expect(applied).toEqual([10_000, 60_000]);
    expect(changes).toEqual([true, false]);
  });

  it('never lengthens the idle timeout under stress', () => {
    const { mode, applied } = watched(5_000, 10_000);
    mode.update(8);
    expect(applied).toEqual([5_000]);
  });
});
