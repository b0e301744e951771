import { describe, expect, it } from 'vitest';
import type { ContractClock } from '../testing/rate-limiter-contract.js';
import { runRateLimiterContract } from '../testing/rate-limiter-contract.js';
import { createMemoryRateLimiter } from './memory-rate-limiter.js';

function manualClock(start = 1_700_000_000_000): ContractClock {
  let now = start;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

const clock = manualClock();
runRateLimiterContract({ name: 'memory, manual clock', create: () => createMemoryRateLimiter({ clock }), clock });
runRateLimiterContract({ name: 'memory, system clock', create: () => createMemoryRateLimiter() });

describe('createMemoryRateLimiter', () => {
  it('drops keys whose units have all expired, without timers', async () => {
    const time = manualClock();
    const limiter = createMemoryRateLimiter({ clock: time });
    for (let index = 0; index < 2000; index += 1) {
      await limiter.consume({ key: `idle-${index}`, limit: 1, windowMs: 1000 });
    }
    expect(limiter.size).toBe(2000);
    time.advance(1000);
    for (let index = 0; index < 2000; index += 1) {
      await limiter.consume({ key: 'busy', limit: 5000, windowMs: 60_000 });
    }
    expect(limiter.size).toBe(1);
  });

  // Review: the sweep waited for as many calls as keys held, which a new key on every call never reaches.
  it('keeps memory bounded when every call names a new key (failed logins from ever new addresses)', async () => {
    const time = manualClock();
    const limiter = createMemoryRateLimiter({ clock: time });
    let largest = 0;
    for (let index = 0; index < 100_000; index += 1) {
      await limiter.consume({ key: `authfail:${index}`, limit: 10, windowMs: 1000 });
      time.advance(1);
      largest = Math.max(largest, limiter.size);
    }
    // About 1,000 keys are live at any time (a 1 s window, one call a millisecond): at most twice that, plus the minimum gap.
    expect(largest).toBeLessThan(4_000);
  });

  it('stays exact over a long run of refusals (entries pruned and compacted)', async () => {
    const time = manualClock();
    const limiter = createMemoryRateLimiter({ clock: time });
    let allowed = 0;
    for (let index = 0; index < 10_000; index += 1) {
      if ((await limiter.consume({ key: 'hot', limit: 3, windowMs: 100 })).allowed) allowed += 1;
      time.advance(1);
    }
    expect(allowed).toBe(300);
  });

  it('rejects a clock without now()', () => {
    expect(() => createMemoryRateLimiter({ clock: {} as ContractClock })).toThrow();
  });
});
