import { once } from 'node:events';
import { connect } from 'node:net';
import { Worker } from 'node:worker_threads';
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
    async refund() {
      store.calls += 1;
      if (store.healthy) return 1;
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

describe('failOpenRateLimiter after an event-loop stall', () => {
  it('takes the answer that arrived during the stall, not the expired deadline, for a store behind a socket', async () => {
    // A store over TCP in another thread, as Redis is another process: it answers every request at once with "refused".
    const store = new Worker(
      `const { createServer } = require('node:net');
       const { parentPort } = require('node:worker_threads');
       const server = createServer((socket) => socket.on('data', () => socket.write('refused\\n')));
       server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));`,
      { eval: true },
    );
    const [port] = (await once(store, 'message')) as [number];
    const client = connect(port, '127.0.0.1');
    await once(client, 'connect');
    const pending: Array<() => void> = [];
    client.on('data', () => pending.shift()?.());
    const overTcp: RateLimiter = {
      consume: () =>
        new Promise((resolve) => {
          pending.push(() => resolve({ allowed: false, remaining: 0, retryAfterMs: 60_000 }));
          client.write('consume\n');
        }),
      peek: async () => 0,
      refund: async () => 0,
    };
    const { logger } = createCapturedLogger('info');
    let failures = 0;
    const open = failOpenRateLimiter({
      limiter: () => overTcp,
      clock: { now: () => Date.now() },
      logger,
      onFailure: () => (failures += 1),
    });
    try {
      const decision = open.consume({ key: 'k', limit: 2, windowMs: 60_000 });
      // This process stalls past the deadline while the answer sits in the socket.
      const until = Date.now() + 400;
      while (Date.now() < until);
      expect(await decision).toEqual({ allowed: false, remaining: 0, retryAfterMs: 60_000 });
      expect(failures).toBe(0);
    } finally {
      client.destroy();
      await store.terminate();
    }
  });
});
