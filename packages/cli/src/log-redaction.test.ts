import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { newWebhookSecret } from '@agentinfra/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpsServer, startOpsServer } from './ops-server.test-support.js';

const swaksFound = spawnSync('swaks', ['--version'], { stdio: 'ignore' }).status === 0;
if (!swaksFound) {
  const line = '[agentinfra] swaks is not installed: run .ci/install-mail-tools.sh';
  if (process.env.CI) throw new Error(line);
  console.warn(`${line}; skipping the SMTP part of the log redaction test`);
}

/** Every request log line of the captured output, parsed. */
function requestLines(log: string): Array<Record<string, unknown>> {
  return log
    .split('\n')
    .filter((line) => line.includes('"msg":"request"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

// #15: no key, token, secret, memory text or mail body ever reaches the log, at any level.
describe('log redaction', () => {
  let ops: OpsServer;
  /** Every secret sent or received, by what it is. */
  const secrets: Record<string, string> = {
    'secret value': 'SECRET-VALUE-8f3a1c',
    'memory text': 'MEMORY-TEXT-b71e04 the launch code is 0000',
    'kv value': 'KV-VALUE-5d2c99',
    'mail body (HTTP send)': 'MAIL-BODY-SEND-41aa07',
    'mail body (ingest)': 'MAIL-BODY-INGEST-c3e9d2',
    'mail body (SMTP)': 'MAIL-BODY-SMTP-90f1b6',
    'mail subject': 'MAIL-SUBJECT-77ab3e',
    'webhook secret (scheduler)': newWebhookSecret(),
    'request id': 'trace-me-4c1d7e',
  };

  beforeAll(async () => {
    ops = await startOpsServer({ config: { http: { rateLimitPerMinute: 0, failedAuthPerMinute: 0 } } });
    const { server } = ops;
    secrets['bridge key'] = server.bridgeKey;
    const bridge = { credential: server.bridgeKey };
    const ok = async (path: string, body: unknown, credential: string, headers?: Record<string, string>) => {
      const response = await server.call(path, body, { credential, ...(headers ? { headers } : {}) });
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
      return response.body;
    };
    for (const agent of ['alice', 'bob'])
      await ok('agent-identity/agents/create', { agent_id: agent, display_name: agent }, server.bridgeKey);
    const alice = (await ok('agent-identity/device/issue', { agent_id: 'alice', label: 'laptop' }, server.bridgeKey)).device_key;
    secrets['device key'] = alice;
    const delegation = await ok(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['memory.read'], expires_at: new Date(Date.now() + 600_000).toISOString() },
      alice,
    );
    secrets['delegation token'] = delegation.token;

    await ok('agent-identity/secrets/put', { agent_id: 'alice', key: 'db', value: secrets['secret value'] }, alice);
    await ok('agent-identity/secrets/get', { agent_id: 'alice', key: 'db' }, alice);
    await ok('agent-identity/secrets/get', { agent_id: 'alice', key: 'db' }, server.bridgeKey);

    const memory = { agent_id: 'alice', kind: 'semantic', text: secrets['memory text'], provenance: 'test', scope: ['self'] };
    await ok('agent-memory/mem/write', memory, alice, { 'x-request-id': secrets['request id'] as string });
    await ok('agent-memory/mem/query', { agent_id: 'alice', q: secrets['memory text'], k: 3, scope: ['self'] }, alice);
    await ok('agent-memory/mem/query', { agent_id: 'alice', q: 'launch code', k: 3, scope: ['self'] }, delegation.token);
    await ok('agent-memory/kv/put', { agent_id: 'alice', key: 'k', value: secrets['kv value'], scope: ['self'] }, alice);
    await ok('agent-memory/kv/get', { agent_id: 'alice', key: 'k', scope: ['self'] }, alice);

    const bytes = Buffer.from('artifact bytes\n');
    const registered = await ok(
      'agent-artifacts/register',
      { agent_id: 'alice', key: 'notes/a.txt', mime: 'text/plain', size: bytes.length, ttl_days: 1 },
      alice,
    );
    expect((await fetch(registered.upload_url, { method: 'PUT', body: bytes, headers: registered.upload_headers })).status).toBeLessThan(
      300,
    );
    await ok(
      'agent-artifacts/commit',
      { artifact_id: registered.artifact_id, sha256: createHash('sha256').update(bytes).digest('hex') },
      alice,
    );
    const grant = await ok(
      'agent-artifacts/grant',
      { artifact_id: registered.artifact_id, to_agent: 'bob', expires_at: new Date(Date.now() + 600_000).toISOString() },
      alice,
    );
    secrets['grant token'] = grant.token;
    const fetched = await server.call('agent-artifacts/fetch', { grant_token: grant.token });
    expect(fetched.status).toBe(200);
    secrets['signed download URL'] = new URL(fetched.body.url).search;

    const address = (await ok('agent-postbox/alloc', { agent_id: 'alice', local_part: 'alice' }, alice)).address;
    const hook = await ok('agent-postbox/webhook/register', { agent_id: 'alice', url: 'https://example.com/hook' }, alice);
    secrets['webhook secret (postbox)'] = hook.secret;
    const rotated = await ok('agent-postbox/webhook/rotate', { agent_id: 'alice', webhook_id: hook.webhook_id }, alice);
    secrets['webhook secret (rotated)'] = rotated.secret;
    await ok(
      'agent-scheduler/job/put',
      {
        agent_id: 'alice',
        name: 'nightly',
        cadence: '@every 1h',
        callback_url: 'https://example.com/cb',
        secret: secrets['webhook secret (scheduler)'],
        max_attempts: 1,
      },
      alice,
    );
    await server.call(
      'agent-postbox/send',
      { agent_id: 'alice', from: address, to: 'x@example.com', subject: secrets['mail subject'], body: secrets['mail body (HTTP send)'] },
      { credential: alice },
    );
    await server.call(
      'agent-postbox/ingest',
      {
        to: address,
        from: 'a@example.com',
        subject: secrets['mail subject'],
        body: secrets['mail body (ingest)'],
        headers: { 'message-id': '<redaction@example.com>' },
        mime_ref: 'none',
      },
      bridge,
    );
    if (swaksFound) {
      const smtp = /smtp on (\S+)/.exec(server.kernel.describeModules().join('\n'))?.[1] as string;
      await promisify(execFile)('swaks', [
        '--server',
        smtp,
        '--to',
        address,
        '--from',
        'sender@example.com',
        '--header',
        `Subject: ${secrets['mail subject']}`,
        '--body',
        secrets['mail body (SMTP)'] as string,
      ]);
    }
    // Refused credentials are logged too: the wrong ones must not appear either.
    secrets['wrong device key'] = `${alice.slice(0, -6)}AAAAAA`;
    await server.call('agent-memory/kv/get', { agent_id: 'alice', key: 'k', scope: ['self'] }, { credential: secrets['wrong device key'] });
    await server.call(
      'agent-identity/device/revoke',
      { device_id: 'dev_nope' },
      { credential: 'bk_wrong-bridge-key-000000000000000000000' },
    );
    const list = await server.call('agent-identity/messages', {}, { credential: alice, method: 'GET' });
    expect(list.status).toBeGreaterThanOrEqual(400);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.bridgeKey}` } })).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await ops?.stop();
  });

  it('logged something for every request', () => {
    expect(requestLines(ops.log()).length).toBeGreaterThanOrEqual(20);
  });

  it('never logs a key, token, secret, memory text or mail body', () => {
    const log = ops.log();
    for (const [what, value] of Object.entries(secrets)) {
      if (what === 'request id') continue;
      expect(log.includes(value), `${what} appears in the log`).toBe(false);
    }
  });

  it('returns x-request-id (echoing the caller’s) and logs it with the route, status and credential', async () => {
    const lines = requestLines(ops.log());
    const traced = lines.find((line) => line.request_id === secrets['request id']);
    expect(traced).toMatchObject({
      module: 'agent-memory',
      route: '/mem/write',
      method: 'POST',
      status: 200,
      credential: 'device',
      agent_id: 'alice',
      credential_id: expect.stringMatching(/^dev_/),
    });
    expect(typeof traced?.ms).toBe('number');
    const response = await ops.server.call('agent-memory/kv/get', { agent_id: 'alice', key: 'k', scope: ['self'] });
    const generated = response.headers.get('x-request-id');
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requestLines(ops.log()).find((line) => line.request_id === generated)).toMatchObject({ status: 401, credential: 'none' });
  });
});
