import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Lock } from '../ports/lock.js';
import type { ContractClock } from './rate-limiter-contract.js';

/** Options of {@link runLockContract}. */
export interface LockContractOptions {
  /** Name of the implementation, shown in the test titles. */
  name: string;
  /** A lock to test; called once per test. Its `close()`, if any, runs after the test. */
  create: () => Lock | Promise<Lock>;
  /** The clock `create` gave the lock; with it the suite moves time instead of sleeping. */
  clock?: ContractClock;
}

/**
 * The behaviour every {@link Lock} guarantees (vitest `describe`/`it`): a key
 * has one holder at a time, release frees it (idempotently), a hold ends after
 * `ttlMs`, releasing an expired lease never frees the next holder's lock,
 * exactly one of 20 concurrent `tryAcquire` calls wins, and invalid options
 * reject with RangeError. Every test uses fresh random keys; expiry tests sleep
 * about 250 ms each without a clock.
 */
export function runLockContract(options: LockContractOptions): void {
  const { clock } = options;
  const pass = async (ms: number): Promise<void> => {
    if (clock === undefined) await sleep(ms);
    else clock.advance(ms);
  };
  const freshKey = (label: string): string => `contract:${label}:${randomUUID()}`;
  let opened: Lock[] = [];

  async function open(): Promise<Lock> {
    const lock = await options.create();
    opened.push(lock);
    return lock;
  }

  describe(`Lock contract: ${options.name}`, () => {
    afterEach(async () => {
      const closing = opened;
      opened = [];
      for (const lock of closing) await lock.close?.();
    });

    it('has one holder per key at a time', async () => {
      const lock = await open();
      const key = freshKey('exclusive');
      const lease = await lock.tryAcquire({ key, ttlMs: 60_000 });
      expect(lease).not.toBeNull();
      expect(await lock.tryAcquire({ key, ttlMs: 60_000 })).toBeNull();
      const other = await lock.tryAcquire({ key: freshKey('other'), ttlMs: 60_000 });
      expect(other).not.toBeNull();
      await lease?.release();
      await other?.release();
    });

    it('is free again once released, and release is idempotent', async () => {
      const lock = await open();
      const key = freshKey('release');
      const lease = await lock.tryAcquire({ key, ttlMs: 60_000 });
      await lease?.release();
      await lease?.release();
      const next = await lock.tryAcquire({ key, ttlMs: 60_000 });
      expect(next).not.toBeNull();
      await lease?.release();
      expect(await lock.tryAcquire({ key, ttlMs: 60_000 })).toBeNull();
      await next?.release();
    });

    it('ends a hold after ttlMs', async () => {
      const lock = await open();
      const key = freshKey('expiry');
      expect(await lock.tryAcquire({ key, ttlMs: 200 })).not.toBeNull();
      expect(await lock.tryAcquire({ key, ttlMs: 200 })).toBeNull();
      await pass(230);
      const next = await lock.tryAcquire({ key, ttlMs: 60_000 });
      expect(next).not.toBeNull();
      await next?.release();
    });

    it('does not free the next holder when an expired lease is released', async () => {
      const lock = await open();
      const key = freshKey('stale');
      const stale = await lock.tryAcquire({ key, ttlMs: 200 });
      expect(stale).not.toBeNull();
      await pass(230);
      const current = await lock.tryAcquire({ key, ttlMs: 60_000 });
      expect(current).not.toBeNull();
      await stale?.release();
      expect(await lock.tryAcquire({ key, ttlMs: 60_000 })).toBeNull();
      await current?.release();
      expect(await lock.tryAcquire({ key, ttlMs: 60_000 })).not.toBeNull();
    });

    it('grants exactly one of 20 concurrent tryAcquire calls', async () => {
      const lock = await open();
      const key = freshKey('concurrent');
      const leases = await Promise.all(Array.from({ length: 20 }, () => lock.tryAcquire({ key, ttlMs: 60_000 })));
      const winners = leases.filter((lease) => lease !== null);
      expect(winners).toHaveLength(1);
      await winners[0]?.release();
    });

    it('rejects invalid options with RangeError', async () => {
      const lock = await open();
      await expect(lock.tryAcquire({ key: freshKey('invalid'), ttlMs: 0 })).rejects.toThrow(RangeError);
      await expect(lock.tryAcquire({ key: freshKey('invalid'), ttlMs: 1.5 })).rejects.toThrow(RangeError);
      await expect(lock.tryAcquire({ key: '', ttlMs: 1000 })).rejects.toThrow(RangeError);
    });
  });
}
