import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityModule } from './module.js';

describe.each(sqlDatabases())('agent-identity /secrets/list pages on $name', ({ create }) => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;
  let key: string;
  /** The stored keys, in the order the list gives them. */
  const stored = Array.from({ length: 7 }, (_, index) => `key-${index}`);

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    server = await startTestKernel({ modules: [identityModule], adapters: { sql: fixture.db } });
    const bridge = { credential: server.bridgeKey };
    await server.call('agent-identity/agents/create', { agent_id: 'vera', display_name: 'Vera' }, bridge);
    key = (await server.call('agent-identity/device/issue', { agent_id: 'vera', label: 'main' }, bridge)).body.device_key;
    for (const name of [...stored].reverse()) {
      const put = await server.call(
        'agent-identity/secrets/put',
        { agent_id: 'vera', key: name, value: `value of ${name}` },
        { credential: key },
      );
      expect(put.status).toBe(200);
    }
  });

  afterAll(async () => {
    await server?.stop();
    await cleanup?.();
  });

  const list = (body: Record<string, unknown>) =>
    server.call('agent-identity/secrets/list', { agent_id: 'vera', ...body }, { credential: key });

  it('answers a request with agent_id only with every secret in one page, and next_cursor null', async () => {
    const all = await list({});
    expect(all.status).toBe(200);
    expect(all.body.secrets.map((secret: { key: string }) => secret.key)).toEqual(stored);
    expect(all.body.next_cursor).toBeNull();
    expect(JSON.stringify(all.body)).not.toContain('value of');
  });

  it('pages by limit and cursor, in key order, without gaps or repeats', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await list({ limit: 3, cursor });
      expect(page.status).toBe(200);
      expect(page.body.secrets.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.secrets.map((secret: { key: string }) => secret.key));
      cursor = page.body.next_cursor;
      pages += 1;
    } while (cursor !== null);
    expect(seen).toEqual(stored);
    expect(pages).toBe(3);
    const exact = await list({ limit: 7 });
    expect(exact.body.next_cursor).toBeNull();
  });

  it('refuses a limit outside 1..500 and a cursor it did not make with 400', async () => {
    for (const limit of [0, 501, 2.5, '3']) {
      const refused = await list({ limit });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }
    const forged = await list({ cursor: 'c1.bm90LWpzb24' });
    expect(forged.status).toBe(400);
    expect(forged.body.error.details.fields).toEqual([{ path: 'cursor', message: 'unknown cursor' }]);
  });
});
