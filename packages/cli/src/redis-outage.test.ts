import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisAvailability, startTcpProxy, type TcpProxy, testRedisUrl } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, type ServeProcess, startServe } from './serve-process.test-support.js';

// The rate-limit store (Redis) is a defence against floods, not a dependency of every request.
describe.runIf(redisAvailability().available)('agentinfra serve when its Redis goes away', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-redis-outage-'));
  const bridgeKey = `bk_${randomBytes(32).toString('base64url')}`;
  let proxy: TcpProxy;
  let server: ServeProcess;

  beforeAll(async () => {
    const redis = new URL(testRedisUrl());
    proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    const env = {
      AGENTINFRA_DATA_DIR: join(dir, 'data'),
      AGENTINFRA_BRIDGE_KEY: bridgeKey,
      AGENTINFRA_MASTER_KEY: randomBytes(32).toString('base64'),
      AGENTINFRA_REDIS_URL: `redis://127.0.0.1:${proxy.port}${redis.pathname}`,
      AGENTINFRA_REDIS_KEY_PREFIX: `outage-${randomBytes(4).toString('hex')}:`,
      AGENTINFRA_ACME_HTTP_PORT: '0',
      AGENTINFRA_SMTP_PORT: '0',
    };
    server = await startServe(['--port', '0'], { cwd: dir, env, timeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
  });

  it('serves requests unlimited, answers bad credentials with 401, and reports itself degraded, not failed', async () => {
    const created = await post(server.url, 'agent-identity/agents/create', { agent_id: 'alice', display_name: 'Alice' }, bridgeKey);
    expect(created.status).toBe(200);
    const before = await fetch(`${server.url}/ready`);
    expect(before.status).toBe(200);
    expect(await before.json()).toEqual(
      // `degraded` only when this host's disk is nearly full (checks["disk:…"]), never because of Redis.
      expect.objectContaining({
        status: expect.stringMatching(/^(ready|degraded)$/),
        checks: expect.objectContaining({ rate_limiter: 'ok' }),
      }),
    );

    await proxy.cut();

    const device = await post(server.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'during the outage' }, bridgeKey);
    expect(device.status).toBe(200);
    const written = await post(
      server.url,
      'agent-memory/mem/write',
      { agent_id: 'alice', kind: 'semantic', text: 'Written while Redis was away.', provenance: 'outage', scope: ['self'] },
      device.body.device_key,
    );
    expect(written.status).toBe(200);
    expect((await post(server.url, 'agent-memory/mem/query', { agent_id: 'alice', q: 'Redis' }, 'dk_unknown')).status).toBe(401);
    const during = await fetch(`${server.url}/ready`);
    expect(during.status).toBe(200);
    const body = (await during.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('degraded');
    expect(body.checks.rate_limiter).toMatch(/^unreachable: /);
    expect(server.output()).toContain('rate limiter unreachable; requests are not rate-limited until it answers');

    // The send quota guards a resource and fails closed: 503 with Retry-After, and nothing is sent or stored.
    const alloc = await post(server.url, 'agent-postbox/alloc', { agent_id: 'alice', local_part: 'alice' }, device.body.device_key);
    expect(alloc.status).toBe(200);
    const mail = { agent_id: 'alice', from: alloc.body.address, to: 'bob@example.com', subject: 'During the outage', body: 'Hello.' };
    const send = await fetch(`${server.url}/functions/v1/agent-postbox/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${device.body.device_key}`, 'content-type': 'application/json' },
      body: JSON.stringify(mail),
    });
    expect(send.status).toBe(503);
    expect(send.headers.get('retry-after')).toBe('2');
    const refusal = (await send.json()) as { error: { code: string; message: string } };
    expect(refusal.error.code).toBe('unavailable');
    expect(refusal.error.message).toContain('Redis server');
    expect(refusal.error.message).not.toContain(String(proxy.port));
    const sent = await post(server.url, 'agent-postbox/list', { agent_id: 'alice', direction: 'out' }, device.body.device_key);
    expect(sent.body.messages).toEqual([]);
  }, 30_000);
});
