import { describe, expect, it } from 'vitest';
import { createStressMode } from './stress-mode.js';

describe('SMTP stress mode', () => {
  const watched = (idleTimeoutMs: number, stressIdleTimeoutMs: number, maxClients = 8) => {
    const applied: number[] = [];
    const changes: boolean[] = [];
    const mode = createStressMode({
      maxClients,
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

  it('leaves below half of an odd or tiny maxClients, never staying in stress with the slots free', () => {
    /** The open counts, going up to maxClients and back to 0, at which the listener is under stress. */
    const stressedAt = (maxClients: number) => {
      const { mode } = watched(60_000, 10_000, maxClients);
      const counts = [
        ...Array.from({ length: maxClients + 1 }, (_, open) => open),
        ...Array.from({ length: maxClients }, (_, i) => maxClients - 1 - i),
      ];
      return counts.filter((open) => {
        mode.update(open);
        return mode.stressed;
      });
    };
    expect(stressedAt(1)).toEqual([1]);
    expect(stressedAt(2)).toEqual([2, 1]);
    expect(stressedAt(3)).toEqual([3, 2]);
    expect(stressedAt(5)).toEqual([4, 5, 4, 3]);
  });

  it('never lengthens the idle timeout under stress', () => {
    const { mode, applied } = watched(5_000, 10_000);
    mode.update(8);
    expect(applied).toEqual([5_000]);
  });
});
