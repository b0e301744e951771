import { randomUUID } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { dependencyFailure, ServiceUnavailableError } from '@agentinfra/core';
import { runLockContract, runRateLimiterContract } from '@agentinfra/core/testing';
import { redisAvailability, startTcpProxy, testRedisUrl } from '@agentinfra/test-services';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RedisAdapterError } from './redis-adapter-error.js';
import { createRedisAdapters, type RedisAdapters } from './redis-adapters.js';

/** Every message along the `cause` chain of `error`, joined. */
function messageChain(error: unknown): string {
  const messages: string[] = [];
  for (let current = error; current instanceof Error; current = current.cause) messages.push(current.message);
  return messages.join(' <- ');
}

/**
 * The TCP connections this process makes to `port` from now on, seen through
 * Node's `net.client.socket` diagnostics channel; `stop()` stops watching.
 */
function watchConnectionsTo(port: number): { readonly sockets: Socket[]; stop(): void } {
  const sockets: Socket[] = [];
  const onSocket = (message: unknown) => {
    const { socket } = message as { socket: Socket };
    socket.once('connect', () => {
      if (socket.remotePort === port) sockets.push(socket);
    });
  };
  diagnosticsChannel.subscribe('net.client.socket', onSocket);
  return { sockets, stop: () => diagnosticsChannel.unsubscribe('net.client.socket', onSocket) };
}

/** Lua that keeps Redis busy for ARGV[1] ms (every other client waits meanwhile), then returns 1. */
const STALL_SCRIPT = `
local function now() local t = redis.call('TIME') return t[1] * 1000 + t[2] / 1000 end
local start = now()
while now() - start < tonumber(ARGV[1]) do end
return 1`;

const url = testRedisUrl();
/** One prefix per run, so runs never see each other's keys. */
const keyPrefix = `agentinfra-test:${randomUUID()}:`;
const opened: RedisAdapters[] = [];

async function connect(options: { onError?: (error: RedisAdapterError) => void } = {}): Promise<RedisAdapters> {
  const adapters = await createRedisAdapters({ url, keyPrefix, connectTimeoutMs: 1_000, ...options });
  opened.push(adapters);
  return adapters;
}

const redis = redisAvailability();
const primary = redis.available ? await connect() : undefined;

/** The adapters connected at load time; only called by tests that run when Redis is reachable. */
function shared(): RedisAdapters {
  if (primary === undefined) throw new Error(`Redis unreachable at ${redis.url}: ${redis.reason}`);
  return primary;
}

afterAll(async () => {
  if (primary !== undefined) {
    for await (const keys of primary.client.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 500 })) {
      if (keys.length > 0) await primary.client.unlink(keys);
    }
  }
  for (const adapters of opened) await adapters.close();
});

describe.runIf(redis.available)('Redis adapters', () => {
  runRateLimiterContract({ name: 'redis', create: () => shared().rateLimiter });
  runLockContract({ name: 'redis', create: () => shared().lock });

  it('shares one limit between two replicas: 101 consumes with limit 100 refuse exactly one', async () => {
    const replicaA = shared();
    const replicaB = await connect();
    const key = `replicas:${randomUUID()}`;
    const decisions = await Promise.all(
      Array.from({ length: 101 }, (_, index) =>
        (index % 2 === 0 ? replicaA : replicaB).rateLimiter.consume({ key, limit: 100, windowMs: 60_000 }),
      ),
    );
    expect(decisions.filter((decision) => !decision.allowed)).toHaveLength(1);
    expect(await replicaA.rateLimiter.peek({ key, windowMs: 60_000 })).toBe(100);
    expect(await replicaB.rateLimiter.peek({ key, windowMs: 60_000 })).toBe(100);
  });

  it('shares locks between two replicas', async () => {
    const replicaB = await connect();
    const key = `replicas:${randomUUID()}`;
    const lease = await shared().lock.tryAcquire({ key, ttlMs: 60_000 });
    expect(lease).not.toBeNull();
    expect(await replicaB.lock.tryAcquire({ key, ttlMs: 60_000 })).toBeNull();
    await lease?.release();
    expect(await replicaB.lock.tryAcquire({ key, ttlMs: 60_000 })).not.toBeNull();
  });

  it('keeps every key under the prefix, expiring with the window or ttl', async () => {
    const { client, rateLimiter, lock } = shared();
    const key = `layout:${randomUUID()}`;
    await rateLimiter.consume({ key, limit: 5, windowMs: 30_000, cost: 2 });
    await lock.tryAcquire({ key, ttlMs: 20_000 });
    const log = `${keyPrefix}ratelimit:{${key}}`;
    expect(await client.zCard(log)).toBe(1);
    expect(await client.get(`${log}:total`)).toBe('2');
    for (const name of [log, `${log}:total`]) {
      expect(await client.pTTL(name)).toBeGreaterThan(29_000);
      expect(await client.pTTL(name)).toBeLessThanOrEqual(30_000);
    }
    expect(await client.pTTL(`${keyPrefix}lock:${key}`)).toBeGreaterThan(19_000);
  });

  it('keeps the log and its total expiring with the window after a refund of part of the only call', async () => {
    const { client, rateLimiter } = shared();
    const key = `refund-layout:${randomUUID()}`;
    await rateLimiter.consume({ key, limit: 5, windowMs: 30_000, cost: 3 });
    expect(await rateLimiter.refund({ key, windowMs: 30_000, cost: 2 })).toBe(2);
    const log = `${keyPrefix}ratelimit:{${key}}`;
    expect(await client.zRange(log, 0, -1)).toEqual([expect.stringMatching(/^1:/)]);
    expect(await client.get(`${log}:total`)).toBe('1');
    for (const name of [log, `${log}:total`]) {
      expect(await client.pTTL(name)).toBeGreaterThan(29_000);
      expect(await client.pTTL(name)).toBeLessThanOrEqual(30_000);
    }
    expect(await rateLimiter.refund({ key, windowMs: 30_000, cost: 5 })).toBe(1);
    expect(await client.exists([log, `${log}:total`])).toBe(0);
  });

  it('recounts the window when the running total was lost', async () => {
    const { client, rateLimiter } = shared();
    const key = `recount:${randomUUID()}`;
    await rateLimiter.consume({ key, limit: 3, windowMs: 60_000, cost: 2 });
    await client.del(`${keyPrefix}ratelimit:{${key}}:total`);
    expect(await rateLimiter.consume({ key, limit: 3, windowMs: 60_000, cost: 2 })).toMatchObject({
      allowed: false,
      remaining: 1,
    });
    expect(await rateLimiter.consume({ key, limit: 3, windowMs: 60_000 })).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('reconnects after the connection drops, running calls made meanwhile, and reports the drop to onError', async () => {
    const errors: RedisAdapterError[] = [];
    const adapters = await connect({ onError: (error) => errors.push(error) });
    const id = await adapters.client.clientId();
    const reconnecting = new Promise((resolve) => adapters.client.once('reconnecting', resolve));
    await shared().client.sendCommand(['CLIENT', 'KILL', 'ID', String(id)]);
    await reconnecting;
    const key = `reconnect:${randomUUID()}`;
    expect(await adapters.rateLimiter.consume({ key, limit: 1, windowMs: 60_000 })).toMatchObject({ allowed: true });
    expect(await adapters.client.clientId()).not.toBe(id);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toBeInstanceOf(RedisAdapterError);
  });

  it('keeps a connection whose server was only slow, and the calls in flight on it', async () => {
    const adapters = await createRedisAdapters({ url, keyPrefix, connectTimeoutMs: 1_000, commandTimeoutMs: 500 });
    opened.push(adapters);
    const id = await adapters.client.clientId();
    // Another client's script stalls the whole server for 1 000 ms: past the deadline (500 + 250 ms) of the call made
    // at 20 ms (770 ms), within that deadline plus the PING's 500 ms (1 270 ms) and the deadline of the call made at
    // 500 ms (1 250 ms).
    const stall = shared().client.eval(STALL_SCRIPT, { keys: [], arguments: ['1000'] });
    await sleep(20);
    const late = adapters.rateLimiter.peek({ key: 'slow', windowMs: 1_000 }).catch((error: unknown) => error);
    await sleep(480);
    const inFlight = adapters.rateLimiter.peek({ key: 'slow', windowMs: 1_000 });
    expect(await late).toBeInstanceOf(RedisAdapterError);
    expect(((await late) as Error).message).toMatch(/no answer within 500 ms/);
    expect(await inFlight).toBe(0);
    expect(await stall).toBe(1);
    expect(await adapters.client.clientId()).toBe(id);
  });

  it('close() while reconnecting after the server dropped the connection leaves no connection open', async () => {
    const adapters = await connect();
    const connections = watchConnectionsTo(Number(new URL(url).port || 6379));
    try {
      const reconnecting = new Promise((resolve) => adapters.client.once('reconnecting', resolve));
      await shared().client.sendCommand(['CLIENT', 'KILL', 'ID', String(await adapters.client.clientId())]);
      await reconnecting;
      await adapters.close();
      await sleep(200);
      expect(adapters.client.isOpen).toBe(false);
      expect(adapters.client.isReady).toBe(false);
      const clients = String(await shared().client.sendCommand(['CLIENT', 'LIST']));
      for (const socket of connections.sockets) {
        expect(socket.destroyed).toBe(true);
        expect(clients).not.toContain(`addr=127.0.0.1:${socket.localPort} `);
      }
    } finally {
      connections.stop();
    }
  });

  it('wraps a failing command as RedisAdapterError with the driver error as cause', async () => {
    const { client, rateLimiter } = shared();
    const key = `wrongtype:${randomUUID()}`;
    await client.set(`${keyPrefix}ratelimit:{${key}}`, 'not a sorted set');
    const failure = await rateLimiter.consume({ key, limit: 1, windowMs: 1_000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RedisAdapterError);
    expect((failure as Error).cause).toBeInstanceOf(Error);
    expect((failure as Error).message).toContain('WRONGTYPE');
  });

  it('fails calls after close with RedisAdapterError, and close is idempotent', async () => {
    const adapters = await connect();
    await adapters.close();
    await adapters.close();
    await expect(adapters.rateLimiter.consume({ key: 'closed', limit: 1, windowMs: 1_000 })).rejects.toThrow(RedisAdapterError);
    const acquire = await adapters.lock.tryAcquire({ key: 'closed', ttlMs: 1_000 }).catch((error: unknown) => error);
    expect(acquire).toBeInstanceOf(RedisAdapterError);
    expect(dependencyFailure(acquire)).toBeInstanceOf(ServiceUnavailableError);
  });

  it('refuses a wrong password without printing it', async () => {
    const parsed = new URL(url);
    parsed.username = 'agentinfra-no-such-user';
    parsed.password = 's3cret-never-printed';
    // Review: a refused password was retried until connectTimeoutMs (10 s by default) before serve stopped. With a
    // timeout longer than the test's, only a refusal that is not retried ends in time.
    const failure = await createRedisAdapters({ url: parsed.toString(), connectTimeoutMs: 120_000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RedisAdapterError);
    expect(messageChain(failure)).not.toContain('s3cret-never-printed');
    expect((failure as Error).message).toContain(':***@');
    expect((failure as Error).message).toMatch(/WRONGPASS|NOAUTH|ERR AUTH|invalid username/);
  }, 20_000);
});

describe('createRedisAdapters without a server', () => {
  it('fails within connectTimeoutMs with a RedisAdapterError that never shows the password', async () => {
    const startedAt = Date.now();
    const failure = await createRedisAdapters({ url: 'redis://app:s3cret@127.0.0.1:1/0', connectTimeoutMs: 300 }).catch(
      (error: unknown) => error,
    );
    expect(Date.now() - startedAt).toBeLessThan(3_000);
    expect(failure).toBeInstanceOf(RedisAdapterError);
    expect((failure as Error).cause).toBeInstanceOf(Error);
    expect((failure as Error).message).toContain('redis://app:***@127.0.0.1:1/0');
    expect(messageChain(failure)).not.toContain('s3cret');
  });
});

describe.runIf(redis.available)('Redis adapters when the server goes silent', () => {
  /**
   * Adapters (300 ms command timeout) talking to the test Redis through a TCP proxy the test can silence or cut,
   * and the connections they make to it (stop watching them when done).
   */
  const behindProxy = async () => {
    const target = new URL(url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const connections = watchConnectionsTo(proxy.port);
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const adapters = await createRedisAdapters({ url: proxied.toString(), keyPrefix, connectTimeoutMs: 1_000, commandTimeoutMs: 300 });
    return { proxy, adapters, connections };
  };

  it('fail a command already sent after commandTimeoutMs instead of waiting for ever', async () => {
    const { proxy, adapters, connections } = await behindProxy();
    try {
      expect(await adapters.rateLimiter.peek({ key: 'silent', windowMs: 1_000 })).toBe(0);
      // A dead host, a firewall dropping packets: the open connection goes silent without closing.
      proxy.silence();
      const started = Date.now();
      const acquire = await adapters.lock.tryAcquire({ key: 'silent', ttlMs: 1_000 }).catch((error: unknown) => error);
      expect(acquire).toBeInstanceOf(RedisAdapterError);
      expect((acquire as Error).message).toMatch(/no answer within 300 ms/);
      // The SET was written and may have taken the key: not a request that certainly did nothing.
      expect(dependencyFailure(acquire)).toBeNull();
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      connections.stop();
      adapters.client.destroy();
      await proxy.cut();
    }
  });

  it('mark a command never written (the connection is down, the client reconnecting) as unavailable (503)', async () => {
    const { proxy, adapters, connections } = await behindProxy();
    try {
      expect(await adapters.rateLimiter.peek({ key: 'cut', windowMs: 1_000 })).toBe(0);
      await proxy.cut();
      // A command written just before the cut may have run; once the client knows the connection is gone, none is written.
      await vi.waitFor(() => expect(adapters.client.isReady).toBe(false));
      const acquire = await adapters.lock.tryAcquire({ key: 'cut', ttlMs: 1_000 }).catch((error: unknown) => error);
      expect(acquire).toBeInstanceOf(RedisAdapterError);
      expect(dependencyFailure(acquire)).toBeInstanceOf(ServiceUnavailableError);
    } finally {
      connections.stop();
      adapters.client.destroy();
    }
  });

  it('replace a connection that went silent once a call and then a PING get no answer on it, so later calls reach Redis again', async () => {
    const { proxy, adapters, connections } = await behindProxy();
    try {
      const silentId = await adapters.client.clientId();
      proxy.silence();
      const unanswered = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          adapters.lock.tryAcquire({ key: `replaced:${index}`, ttlMs: 1_000 }).catch((error: unknown) => error),
        ),
      );
      for (const failure of unanswered) expect(failure).toBeInstanceOf(RedisAdapterError);
      // The PING sent on the silent connection gets no answer within 300 ms either: a new connection is made.
      await vi.waitFor(() => expect(connections.sockets).toHaveLength(2), { timeout: 3_000 });
      expect(await adapters.rateLimiter.peek({ key: 'replaced', windowMs: 1_000 })).toBe(0);
      expect(await adapters.client.clientId()).not.toBe(silentId);
      // The silent connection is gone, and with it every command still waiting for an answer on it.
      expect(connections.sockets).toHaveLength(2);
      expect(connections.sockets[0]?.destroyed).toBe(true);
    } finally {
      connections.stop();
      await adapters.close();
      await proxy.cut();
    }
  });

  it('close() destroys a connection Redis no longer answers on, so that it keeps no process alive', async () => {
    const { proxy, adapters, connections } = await behindProxy();
    try {
      expect(await adapters.rateLimiter.peek({ key: 'close-silent', windowMs: 1_000 })).toBe(0);
      proxy.silence();
      const pending = adapters.rateLimiter.peek({ key: 'close-silent', windowMs: 1_000 }).catch((error: unknown) => error);
      const started = Date.now();
      await adapters.close();
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(connections.sockets).toHaveLength(1);
      expect(connections.sockets[0]?.destroyed).toBe(true);
      expect(await pending).toBeInstanceOf(RedisAdapterError);
    } finally {
      connections.stop();
      await proxy.cut();
    }
  });

  it('close() while reconnecting to a port with nothing listening ends the reconnection: no event, timer or socket outlives it', async () => {
    const { proxy, adapters, connections } = await behindProxy();
    try {
      await proxy.cut();
      await vi.waitFor(() => expect(adapters.client.isReady).toBe(false));
      // Let the back-off grow past a few attempts, so that a delay is pending when close() is called.
      await sleep(600);
      await adapters.close();
      const after: string[] = [];
      for (const event of ['reconnecting', 'connect', 'error']) adapters.client.on(event, () => after.push(event));
      // Longer than node-redis's longest reconnect delay here (2.1 s): a pending one would end (and report) meanwhile.
      await sleep(2_300);
      expect(after).toEqual([]);
      expect(adapters.client.isOpen).toBe(false);
      expect(connections.sockets.every((socket) => socket.destroyed)).toBe(true);
    } finally {
      connections.stop();
    }
  });

  it('close() during the wait for an unanswered call does not make a new connection that stays open', async () => {
    const { proxy, adapters, connections } = await behindProxy();
    try {
      proxy.silence();
      const pending = adapters.lock.tryAcquire({ key: 'close-replace', ttlMs: 1_000 }).catch((error: unknown) => error);
      // The call's deadline (550 ms) falls while close() waits for Redis (400-700 ms).
      await sleep(400);
      await adapters.close();
      expect(await pending).toBeInstanceOf(RedisAdapterError);
      // Long enough for a connection made meanwhile to be established.
      await sleep(200);
      expect(connections.sockets.length).toBeGreaterThan(0);
      for (const socket of connections.sockets) expect(socket.destroyed).toBe(true);
      expect(adapters.client.isReady).toBe(false);
    } finally {
      connections.stop();
      await proxy.cut();
    }
  });
});
