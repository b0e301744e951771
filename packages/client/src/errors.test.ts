import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentInfraClient, type AgentInfraError, createClient } from './index.js';
import { seedAgent } from './test-support/agent.js';
import { failureOf } from './test-support/failure-of.js';
import { startServer, type TestServer } from './test-support/serve.js';

describe('typed errors from a real server', () => {
  let server: TestServer;
  let alice: AgentInfraClient;
  let aliceKey: string;

  beforeAll(async () => {
    server = await startServer({ AGENTINFRA_RATE_LIMIT_PER_MINUTE: '40' });
    ({ agent: alice, key: aliceKey } = await seedAgent(server.url, 'alice'));
    await seedAgent(server.url, 'bob');
  }, 60_000);
  afterAll(() => server?.stop());

  it('401 unauthenticated for an unknown key, with the request id', async () => {
    const stranger = createClient({ url: server.url, key: 'dk_not_a_real_key' });
    const error = await failureOf(stranger.identity.secrets.list({ agent_id: 'alice' }));
    expect(error).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(error.requestId).toMatch(/.+/);
    expect(error.message).not.toBe('');
  });

  it('403 forbidden when acting for another agent', async () => {
    const error = await failureOf(alice.identity.secrets.list({ agent_id: 'bob' }));
    expect(error).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('404 not_found for a missing secret', async () => {
    const error = await failureOf(alice.identity.secrets.get({ agent_id: 'alice', key: 'missing' }));
    expect(error).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('400 invalid_request with the failing fields in details', async () => {
    const error = await failureOf(alice.memory.write({ agent_id: 'alice', kind: 'semantic', text: '', provenance: 'x', scope: ['self'] }));
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(JSON.stringify(error.details)).toContain('text');
  });

  it('422 verification_failed when the committed sha256 does not match', async () => {
    const data = Buffer.from('hello');
    const registered = await alice.artifacts.register({ agent_id: 'alice', key: 'v.txt', mime: 'text/plain', size: data.length });
    await fetch(registered.upload_url, { method: 'PUT', headers: registered.upload_headers, body: data });
    const wrong = createHash('sha256').update('other').digest('hex');
    const error = await failureOf(alice.artifacts.commit({ artifact_id: registered.artifact_id, sha256: wrong }));
    expect(error).toMatchObject({ status: 422, code: 'verification_failed' });
  });

  it('429 rate_limited with Retry-After; a wait longer than maxDelayMs is not retried', async () => {
    const limited = createClient({ url: server.url, key: aliceKey });
    let error: AgentInfraError | undefined;
    for (let i = 0; i < 60 && error === undefined; i += 1) {
      error = await limited.memory.query({ agent_id: 'alice', q: 'anything', scope: ['self'] }).then(
        () => undefined,
        (failure: AgentInfraError) => failure,
      );
    }
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(error?.retryAfterSeconds).toBeGreaterThan(10);
  });
});
