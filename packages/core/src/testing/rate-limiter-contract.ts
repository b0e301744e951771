import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../ports/clock.js';
import type { RateDecision, RateLimiter } from '../ports/rate-limiter.js';

/** A {@link Clock} a contract suite can move forward, shared with the implementation under test. */
export interface ContractClock extends Clock {
  /** Moves the time forward by `ms` milliseconds. */
  advance(ms: number): void;
}

/** Options of {@link runRateLimiterContract}. */
export interface RateLimiterContractOptions {
  /** Name of the implementation, shown in the test titles. */
  name: string;
  /** A limiter to test; called once per test. Its `close()`, if any, runs after the test. */
  create: () => RateLimiter | Promise<RateLimiter>;
  /**
   * The clock `create` gave the limiter. With it the suite moves time instead of
   * sleeping and checks `retryAfterMs` exactly; without it the suite sleeps
   * (windows of a few hundred ms) and checks `retryAfterMs` against the bounds
   * measured around each call.
   */
  clock?: ContractClock;
}

/** A call's result with the times (ms) just before it started and just after it ended. */
interface Timed<T> {
  value: T;
  start: number;
  end: number;
}

/**
 * The behaviour every {@link RateLimiter} guarantees (vitest `describe`/`it`):
 * the limit is exact, refused attempts are not counted, the window slides,
 * `remaining` and `retryAfterMs` are right, costs above 1 count as that many
 * units, keys are independent, 50 concurrent calls with limit 10 allow exactly
 * 10, `peek` is read-only, `refund` takes back the newest units and no
 * more than are counted, and invalid options reject with RangeError.
 * Every test uses fresh random keys.
 */
export function runRateLimiterContract(options: RateLimiterContractOptions): void {
  const { clock } = options;
  const now = (): number => (clock === undefined ? Date.now() : clock.now());
  const pass = async (ms: number): Promise<void> => {
    if (clock === undefined) await sleep(ms);
    else clock.advance(ms);
  };
  const freshKey = (label: string): string => `contract:${label}:${randomUUID()}`;
  let opened: RateLimiter[] = [];

  async function open(): Promise<RateLimiter> {
    const limiter = await options.create();
    opened.push(limiter);
    return limiter;
  }

  async function timed<T>(call: () => Promise<T>): Promise<Timed<T>> {
    const start = now();
    const value = await call();
    return { value, start, end: now() };
  }

  /** `retryAfterMs` of `refusal` is when the units counted during `counted` expire, `windowMs` later. */
  function expectRetryAfter(refusal: Timed<RateDecision>, counted: Timed<RateDecision>, windowMs: number): void {
    expect(refusal.value.allowed).toBe(false);
    const earliest = counted.start + windowMs - refusal.end;
    const latest = counted.end + windowMs - refusal.start;
    if (clock !== undefined) {
      expect(refusal.value.retryAfterMs).toBe(earliest);
      return;
    }
    expect(refusal.value.retryAfterMs).toBeGreaterThanOrEqual(Math.max(1, earliest - 2));
    expect(refusal.value.retryAfterMs).toBeLessThanOrEqual(latest + 2);
  }

  describe(`RateLimiter contract: ${options.name}`, () => {
    afterEach(async () => {
      const closing = opened;
      opened = [];
      for (const limiter of closing) await limiter.close?.();
    });

    it('allows exactly `limit` units, then refuses with retryAfterMs until the oldest expires', async () => {
      const limiter = await open();
      const key = freshKey('exact');
      const windowMs = 60_000;
      const first = await timed(() => limiter.consume({ key, limit: 3, windowMs }));
      expect(first.value).toEqual({ allowed: true, remaining: 2, retryAfterMs: 0 });
      expect(await limiter.consume({ key, limit: 3, windowMs })).toEqual({ allowed: true, remaining: 1, retryAfterMs: 0 });
      expect(await limiter.consume({ key, limit: 3, windowMs })).toEqual({ allowed: true, remaining: 0, retryAfterMs: 0 });
      const refused = await timed(() => limiter.consume({ key, limit: 3, windowMs }));
      expect(refused.value.remaining).toBe(0);
      expectRetryAfter(refused, first, windowMs);
      expect(await limiter.peek({ key, windowMs })).toBe(3);
    });

    it('does not count refused attempts', async () => {
      const limiter = await open();
      const key = freshKey('refused');
      const windowMs = 400;
      expect((await limiter.consume({ key, limit: 2, windowMs })).allowed).toBe(true);
      expect((await limiter.consume({ key, limit: 2, windowMs })).allowed).toBe(true);
      await pass(200);
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expect((await limiter.consume({ key, limit: 2, windowMs })).allowed).toBe(false);
      }
      expect(await limiter.peek({ key, windowMs })).toBe(2);
      await pass(220);
      expect(await limiter.consume({ key, limit: 2, windowMs })).toEqual({ allowed: true, remaining: 1, retryAfterMs: 0 });
    });

    it('slides the window: units free up one by one as they age out', async () => {
      const limiter = await open();
      const key = freshKey('slide');
      const windowMs = 400;
      const first = await timed(() => limiter.consume({ key, limit: 2, windowMs }));
      await pass(150);
      const second = await timed(() => limiter.consume({ key, limit: 2, windowMs }));
      expect(second.value).toEqual({ allowed: true, remaining: 0, retryAfterMs: 0 });
      const refused = await timed(() => limiter.consume({ key, limit: 2, windowMs }));
      expectRetryAfter(refused, first, windowMs);
      await pass(refused.value.retryAfterMs + 10);
      expect(await limiter.consume({ key, limit: 2, windowMs })).toMatchObject({ allowed: true, retryAfterMs: 0 });
      if (clock !== undefined) {
        const again = await timed(() => limiter.consume({ key, limit: 2, windowMs }));
        expectRetryAfter(again, second, windowMs);
      }
      await pass(windowMs + 10);
      expect(await limiter.peek({ key, windowMs })).toBe(0);
    });

    it('counts a cost above 1 as that many units', async () => {
      const limiter = await open();
      const key = freshKey('cost');
      const windowMs = 60_000;
      expect(await limiter.consume({ key, limit: 10, windowMs, cost: 4 })).toEqual({
        allowed: true,
        remaining: 6,
        retryAfterMs: 0,
      });
      expect(await limiter.consume({ key, limit: 10, windowMs, cost: 4 })).toMatchObject({ allowed: true, remaining: 2 });
      const refused = await limiter.consume({ key, limit: 10, windowMs, cost: 4 });
      expect(refused).toMatchObject({ allowed: false, remaining: 2 });
      expect(refused.retryAfterMs).toBeGreaterThan(0);
      expect(await limiter.consume({ key, limit: 10, windowMs, cost: 2 })).toMatchObject({ allowed: true, remaining: 0 });
      expect(await limiter.peek({ key, windowMs })).toBe(10);
    });

    it('reports retryAfterMs for when enough units expire to fit the cost', async () => {
      const limiter = await open();
      const key = freshKey('retry-cost');
      const windowMs = 500;
      const first = await timed(() => limiter.consume({ key, limit: 5, windowMs, cost: 2 }));
      await pass(100);
      const second = await timed(() => limiter.consume({ key, limit: 5, windowMs, cost: 2 }));
      await pass(100);
      expect(await limiter.consume({ key, limit: 5, windowMs })).toMatchObject({ allowed: true, remaining: 0 });
      const needsTwoEntries = await timed(() => limiter.consume({ key, limit: 5, windowMs, cost: 3 }));
      expect(needsTwoEntries.value.remaining).toBe(0);
      expectRetryAfter(needsTwoEntries, second, windowMs);
      const needsOneEntry = await timed(() => limiter.consume({ key, limit: 5, windowMs, cost: 1 }));
      expectRetryAfter(needsOneEntry, first, windowMs);
    });

    it('keeps keys independent', async () => {
      const limiter = await open();
      const a = freshKey('a');
      const b = freshKey('b');
      expect((await limiter.consume({ key: a, limit: 1, windowMs: 60_000 })).allowed).toBe(true);
      expect((await limiter.consume({ key: b, limit: 1, windowMs: 60_000 })).allowed).toBe(true);
      expect((await limiter.consume({ key: a, limit: 1, windowMs: 60_000 })).allowed).toBe(false);
      expect(await limiter.peek({ key: b, windowMs: 60_000 })).toBe(1);
    });

    it('peek is read-only and reports 0 for an unknown key', async () => {
      const limiter = await open();
      const key = freshKey('peek');
      expect(await limiter.peek({ key, windowMs: 60_000 })).toBe(0);
      await limiter.consume({ key, limit: 2, windowMs: 60_000 });
      expect(await limiter.peek({ key, windowMs: 60_000 })).toBe(1);
      expect(await limiter.peek({ key, windowMs: 60_000 })).toBe(1);
      expect(await limiter.consume({ key, limit: 2, windowMs: 60_000 })).toMatchObject({ allowed: true, remaining: 0 });
    });

    it('refunds the most recently counted units, never more than are counted', async () => {
      const limiter = await open();
      const key = freshKey('refund');
      const windowMs = 60_000;
      expect(await limiter.refund({ key, windowMs })).toBe(0);
      for (let i = 0; i < 3; i += 1) expect((await limiter.consume({ key, limit: 3, windowMs })).allowed).toBe(true);
      expect((await limiter.consume({ key, limit: 3, windowMs })).allowed).toBe(false);
      expect(await limiter.refund({ key, windowMs })).toBe(1);
      expect(await limiter.consume({ key, limit: 3, windowMs })).toMatchObject({ allowed: true, remaining: 0 });
      expect(await limiter.refund({ key, windowMs, cost: 5 })).toBe(3);
      expect(await limiter.peek({ key, windowMs })).toBe(0);
      expect(await limiter.consume({ key, limit: 3, windowMs, cost: 3 })).toMatchObject({ allowed: true, remaining: 0 });
    });

    it('refunds part of a call that cost more than one unit, and the rest still expires with it', async () => {
      const limiter = await open();
      const key = freshKey('refund-part');
      // Long enough that the first call's units are still counted at the last peek on a loaded CI host (400 ms was not).
      const windowMs = 3_000;
      const first = await timed(() => limiter.consume({ key, limit: 5, windowMs, cost: 2 }));
      expect(first.value.allowed).toBe(true);
      await pass(200);
      expect((await limiter.consume({ key, limit: 5, windowMs, cost: 3 })).allowed).toBe(true);
      expect(await limiter.refund({ key, windowMs, cost: 2 })).toBe(2);
      expect(await limiter.peek({ key, windowMs })).toBe(3);
      // 3 counted, 3 more do not fit until the first call's 2 units expire.
      expectRetryAfter(await timed(() => limiter.consume({ key, limit: 5, windowMs, cost: 3 })), first, windowMs);
      expect(await limiter.consume({ key, limit: 5, windowMs, cost: 2 })).toMatchObject({ allowed: true, remaining: 0 });
      expect(await limiter.refund({ key, windowMs, cost: 4 })).toBe(4);
      expect(await limiter.peek({ key, windowMs })).toBe(1);
    });

    it('allows exactly 10 of 50 concurrent consumes with limit 10', async () => {
      const limiter = await open();
      const key = freshKey('concurrent');
      const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.consume({ key, limit: 10, windowMs: 60_000 })));
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(10);
      expect(decisions.filter((decision) => !decision.allowed).every((decision) => decision.retryAfterMs > 0)).toBe(true);
      expect(await limiter.peek({ key, windowMs: 60_000 })).toBe(10);
    });

    it('rejects invalid options with RangeError', async () => {
      const limiter = await open();
      const key = freshKey('invalid');
      await expect(limiter.consume({ key, limit: 2, windowMs: 1000, cost: 3 })).rejects.toThrow(RangeError);
      await expect(limiter.consume({ key, limit: 0, windowMs: 1000 })).rejects.toThrow(RangeError);
      await expect(limiter.consume({ key, limit: 2, windowMs: 0 })).rejects.toThrow(RangeError);
      await expect(limiter.consume({ key, limit: 2, windowMs: 1000, cost: 1.5 })).rejects.toThrow(RangeError);
      await expect(limiter.consume({ key: '', limit: 2, windowMs: 1000 })).rejects.toThrow(RangeError);
      await expect(limiter.peek({ key, windowMs: -1 })).rejects.toThrow(RangeError);
      await expect(limiter.refund({ key, windowMs: 1000, cost: 0 })).rejects.toThrow(RangeError);
      await expect(limiter.refund({ key: '', windowMs: 1000 })).rejects.toThrow(RangeError);
      expect(await limiter.peek({ key, windowMs: 1000 })).toBe(0);
    });
  });
}
