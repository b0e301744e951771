import { randomUUID } from 'node:crypto';
import { secretProbe, sqlDatabases, webhookSecretCases } from '@agentinfra/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { usePostboxServer } from './test-support/use-postbox-server.js';

// The same cases and answers as the scheduler's secret-rule.test.ts (testkit's webhookSecretCases): both modules take a
// caller's signing secret by core's webhookSecretSchema (CONTRACT.md "Signed deliveries").
const CASES = webhookSecretCases();
const probeOf = secretProbe;

describe('postbox /webhook/register and /webhook/rotate take a signing secret by the shared rule', () => {
  const [sqlite] = sqlDatabases();
  const t = usePostboxServer(sqlite!.create, { postboxConfig: { smtp: { port: 0 } } });
  let webhookId: string;

  /** POSTs over HTTP as alice. @returns the status, the answer's text as sent and its parsed body. */
  const post = async (path: string, body: Record<string, unknown>) => {
    const response = await fetch(`${t.server.url}/functions/v1/agent-postbox/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys.alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: 'alice', ...body }),
    });
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text) };
  };

  beforeAll(async () => {
    const registered = await post('webhook/register', { url: 'http://127.0.0.1:9/rotated' });
    expect(registered.status).toBe(200);
    webhookId = registered.body.webhook_id;
  });

  it.each(CASES)('$name', async ({ secret, refused }) => {
    const url = `http://127.0.0.1:9/${randomUUID().slice(0, 12)}`;
    for (const [path, body] of [
      ['webhook/register', { url, secret }],
      ['webhook/rotate', { webhook_id: webhookId, secret }],
    ] as const) {
      const answer = await post(path, body);
      if (refused === undefined) {
        expect(answer.status, `${path}: ${answer.text}`).toBe(200);
        continue;
      }
      expect(answer.text, path).not.toContain(probeOf(secret));
      expect(answer.status, path).toBe(400);
      expect(answer.body.error.code, path).toBe('invalid_request');
      expect(answer.body.error.details.fields, path).toEqual([{ path: 'secret', message: refused }]);
    }
    if (refused === undefined) {
      const registered = (await post('webhook/list', {})).body.webhooks.find((hook: { url: string }) => hook.url === url);
      expect((await post('webhook/delete', { webhook_id: registered.webhook_id })).status).toBe(200);
    }
  });

  it('answers a secret that is not a string with the type error only', async () => {
    const answer = await post('webhook/register', { url: 'http://127.0.0.1:9/typed', secret: ['whsec_AAAA'] });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.fields).toEqual([{ path: 'secret', message: 'Invalid input: expected string, received array' }]);
  });
});
