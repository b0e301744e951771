import { z } from 'zod';
import type { Clock } from '../ports/clock.js';
import { systemClock } from '../ports/clock.js';
import type { Lock, LockLease } from '../ports/lock.js';
import { amortisedSweep } from './amortised-sweep.js';

/**
 * Options of {@link Lock.tryAcquire}, as every implementation validates them:
 * `key` non-empty, `ttlMs` a positive integer (milliseconds).
 */
export const lockAcquireSchema = z.object({
  key: z.string().min(1),
  ttlMs: z.number().int().positive(),
});

/** Validated {@link Lock.tryAcquire} options. */
export type LockAcquire = z.output<typeof lockAcquireSchema>;

/**
 * Parses {@link Lock.tryAcquire} options.
 * @throws RangeError naming the offending fields (a caller's bug), with the ZodError as `cause`.
 */
export function parseLockAcquire(options: unknown): LockAcquire {
  const parsed = lockAcquireSchema.safeParse(options);
  if (!parsed.success) {
    throw new RangeError(`Invalid lock options: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  }
  return parsed.data;
}

const memoryLockOptionsSchema = z.object({
  clock: z.custom<Clock>((value) => typeof (value as Partial<Clock> | undefined)?.now === 'function').optional(),
});

/** Options of {@link createMemoryLock}. */
export type MemoryLockOptions = z.input<typeof memoryLockOptionsSchema>;

/** An in-process {@link Lock} that also reports how many keys it tracks. */
export interface MemoryLock extends Lock {
  /** Keys currently recorded as held (expired holds are dropped as calls go on). */
  readonly size: number;
}

interface Hold {
  /** Identity of the lease that holds the key. */
  owner: object;
  /** When the hold ends (ms since the epoch); the key is free from this instant on. */
  expiresAt: number;
}

/**
 * In-process {@link Lock} for the embedded default (one process).
 *
 * A key is held from `tryAcquire` until its lease is released or `ttlMs`
 * elapse, whichever comes first. Releasing a lease whose hold expired and was
 * taken by someone else leaves the new holder alone. Expired holds are swept
 * every so many calls; no timer is started.
 *
 * @param options.clock time source (default the system clock), injectable for tests.
 * @throws ZodError when `options` is malformed; `tryAcquire` throws RangeError on invalid options.
 */
export function createMemoryLock(options: MemoryLockOptions = {}): MemoryLock {
  const clock = memoryLockOptionsSchema.parse(options).clock ?? systemClock;
  const holds = new Map<string, Hold>();
  const sweep = amortisedSweep(holds, (hold, now) => hold.expiresAt <= now);

  return {
    get size() {
      return holds.size;
    },

    async tryAcquire(rawOptions): Promise<LockLease | null> {
      const { key, ttlMs } = parseLockAcquire(rawOptions);
      const now = clock.now();
      sweep(now);
      const current = holds.get(key);
      if (current !== undefined && current.expiresAt > now) return null;
      const owner = {};
      holds.set(key, { owner, expiresAt: now + ttlMs });
      return {
        async release() {
          if (holds.get(key)?.owner === owner) holds.delete(key);
        },
      };
    },
  };
}
