import { randomUUID } from 'node:crypto';
import { secretProbe, sqlDatabases, webhookSecretCases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

// The same cases and answers as the postbox's webhook-secret-rule.test.ts (testkit's webhookSecretCases): both modules take a
// caller's signing secret by core's webhookSecretSchema (CONTRACT.md "Signed deliveries").
const CASES = webhookSecretCases();
const probeOf = secretProbe;

describe('scheduler /job/put takes a signing secret by the shared rule', () => {
  let t: SchedulerTestServer;
  let cleanup: () => Promise<void>;

  /** POSTs over HTTP as alice. @returns the status, the answer's text as sent and its parsed body. */
  const post = async (path: string, body: Record<string, unknown>) => {
    const response = await fetch(`${t.server.url}/functions/v1/agent-scheduler/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys.alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: 'alice', ...body }),
    });
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text) };
  };

  beforeAll(async () => {
    const [sqlite] = sqlDatabases();
    const fixture = await sqlite!.create();
    cleanup = fixture.cleanup;
    t = await startSchedulerTestServer({ db: fixture.db, listen: true, jobs: { enabled: false } });
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it.each(CASES)('$name', async ({ secret, refused }) => {
    const name = `secret-${randomUUID().slice(0, 12)}`;
    const answer = await post('job/put', { name, cadence: '@every 1h', callback_url: 'http://127.0.0.1:9/hook', secret });
    if (refused === undefined) {
      expect(answer.status, answer.text).toBe(200);
      expect((await post('job/delete', { name })).status).toBe(200);
      return;
    }
    expect(answer.text).not.toContain(probeOf(secret));
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_request');
    expect(answer.body.error.details.fields).toEqual([{ path: 'secret', message: refused }]);
  });

  it('answers a secret that is not a string with the type error only', async () => {
    const answer = await post('job/put', {
      name: 'typed',
      cadence: '@every 1h',
      callback_url: 'http://127.0.0.1:9/hook',
      secret: ['whsec_AAAA'],
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.fields).toEqual([{ path: 'secret', message: 'Invalid input: expected string, received array' }]);
  });
});
