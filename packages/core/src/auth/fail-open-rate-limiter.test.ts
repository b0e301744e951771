import { describe, expect, it } from 'vitest';
import type { RateLimiter } from '../ports/rate-limiter.js';
import { createCapturedLogger } from '../testing/captured-logger.js';
import { failOpenRateLimiter, probeRateLimiter } from './fail-open-rate-limiter.js';

/** A store that fails (throws, or never answers) until `healthy` is set, counting the calls it gets. */
function flakyStore(mode: 'throw' | 'hang') {
  const store = { calls: 0, healthy: false };
  const limiter: RateLimiter = {
    async consume() {
      store.calls += 1;
      if (store.healthy) return { allowed: false, remaining: 0, retryAfterMs: 1_000 };
      if (mode === 'throw') throw new Error('connection refused');
      return new Promise(() => undefined);
    },
    async peek() {
      store.calls += 1;
      if (store.healthy) return 7;
      if (mode === 'throw') throw new Error('connection refused');
      return new Promise(() => undefined);
    },
  };
  return { store, limiter };
}

describe('failOpenRateLimiter', () => {
  it.each(['throw', 'hang'] as const)(
    'allows while the store fails (%s), asks it again after 5 s, and limits once it answers',
    async (mode) => {
      const { store, limiter } = flakyStore(mode);
      const clock = { ms: 1_000_000, now: () => clock.ms };
      const { logger, lines } = createCapturedLogger('info');
      let failures = 0;
      const open = failOpenRateLimiter({ limiter: () => limiter, clock, logger, onFailure: () => (failures += 1) });
      const request = { key: 'k', limit: 10, windowMs: 60_000 };
      expect(await open.consume(request)).toEqual({ allowed: true, remaining: 10, retryAfterMs: 0 });
      expect(await open.peek(request)).toBe(0);
      expect(await open.consume(request)).toEqual({ allowed: true, remaining: 10, retryAfterMs: 0 });
      expect([store.calls, failures]).toEqual([1, 1]);
      expect(lines.filter((line) => String(line.msg).startsWith('rate limiter unreachable'))).toHaveLength(1);
      clock.ms += 5_000;
      store.healthy = true;
      expect(await open.consume(request)).toEqual({ allowed: false, remaining: 0, retryAfterMs: 1_000 });
      expect(await open.peek(request)).toBe(7);
      expect(store.calls).toBe(3);
    },
  );

  it('probes for /ready within the same deadline', async () => {
    expect(await probeRateLimiter(flakyStore('hang').limiter)).toBe('unreachable: no answer within 250 ms');
    expect(await probeRateLimiter(flakyStore('throw').limiter)).toBe('unreachable: connection refused');
  });
});
