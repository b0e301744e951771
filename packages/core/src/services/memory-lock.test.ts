import { describe, expect, it } from 'vitest';
import { runLockContract } from '../testing/lock-contract.js';
import type { ContractClock } from '../testing/rate-limiter-contract.js';
import { createMemoryLock } from './memory-lock.js';

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
runLockContract({ name: 'memory, manual clock', create: () => createMemoryLock({ clock }), clock });
runLockContract({ name: 'memory, system clock', create: () => createMemoryLock() });

describe('createMemoryLock', () => {
  it('drops expired holds that were never released, without timers', async () => {
    const time = manualClock();
    const lock = createMemoryLock({ clock: time });
    for (let index = 0; index < 2000; index += 1) {
      await lock.tryAcquire({ key: `abandoned-${index}`, ttlMs: 1000 });
    }
    expect(lock.size).toBe(2000);
    time.advance(1000);
    for (let index = 0; index < 2000; index += 1) {
      const lease = await lock.tryAcquire({ key: 'busy', ttlMs: 1000 });
      await lease?.release();
    }
    expect(lock.size).toBeLessThanOrEqual(1);
  });

  // Review: the sweep waited for as many calls as keys held, which a new key on every call never reaches.
  it('keeps memory bounded when every call names a new key', async () => {
    const time = manualClock();
    const lock = createMemoryLock({ clock: time });
    let largest = 0;
    for (let index = 0; index < 100_000; index += 1) {
      await lock.tryAcquire({ key: `job:${index}`, ttlMs: 1000 });
      time.advance(1);
      largest = Math.max(largest, lock.size);
    }
    expect(largest).toBeLessThan(4_000);
  });

  it('holds a key until exactly ttlMs have passed', async () => {
    const time = manualClock();
    const lock = createMemoryLock({ clock: time });
    await lock.tryAcquire({ key: 'edge', ttlMs: 100 });
    time.advance(99);
    expect(await lock.tryAcquire({ key: 'edge', ttlMs: 100 })).toBeNull();
    time.advance(1);
    expect(await lock.tryAcquire({ key: 'edge', ttlMs: 100 })).not.toBeNull();
  });
});
