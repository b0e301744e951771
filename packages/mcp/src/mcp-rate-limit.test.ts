import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpTestServer, startMcpTestServer } from './test-support/mcp-test-server.js';

/** POSTs JSON-RPC `messages` (a batch when more than one) to /mcp with `credential`. */
async function post(t: McpTestServer, credential: string, messages: unknown[]) {
  const response = await fetch(`${t.server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${credential}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      // The last revision with batches (2025-06-18 removed them), since the test sends some.
      'mcp-protocol-version': '2025-03-26',
    },
    body: JSON.stringify(messages.length === 1 ? messages[0] : messages),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
}

const listTools = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });

// docs/api.md: every request a credential authenticates counts toward its per-minute limit; /mcp is no exception.
describe('/mcp and the per-credential rate limit', () => {
  let t: McpTestServer;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await sqlDatabases()[0]!.create();
    cleanup = fixture.cleanup;
    t = await startMcpTestServer(fixture.db, { rateLimitPerMinute: 5 });
  });
  afterAll(async () => {
    await t?.stop();
    await cleanup?.();
  });

  it('counts every message of a batch, and answers 429 with Retry-After once the minute is used up', async () => {
    const batch = await post(t, t.keys.alice, [listTools(1), listTools(2), listTools(3), listTools(4)]);
    expect(batch.status).toBe(200);
    expect(batch.body).toHaveLength(4);
    // A body that is not even JSON counts as a request too, as on the API.
    const notJson = await fetch(`${t.server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.keys.alice}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{not json',
    });
    expect(notJson.status).toBe(400);
    const over = await post(t, t.keys.alice, [listTools(6)]);
    expect(over.status).toBe(429);
    expect((over.body as { error: { code: string } }).error.code).toBe('rate_limited');
    expect(Number(over.retryAfter)).toBeGreaterThan(0);
    // Another credential has its own minute.
    expect((await post(t, t.keys.bob, [listTools(7)])).status).toBe(200);
    // A batch bigger than a whole minute is refused outright, and does not switch the limits off for anyone.
    const huge = await post(
      t,
      t.keys.bob,
      Array.from({ length: 6 }, (_, i) => listTools(10 + i)),
    );
    expect(huge.status).toBe(429);
    expect((await post(t, t.keys.alice, [listTools(20)])).status).toBe(429);
  });
});
