import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_DOMAIN, type PostboxTestServer, startPostboxTestServer } from './test-support/postbox-test-server.js';

const alice = `alice@${MAIL_DOMAIN}`;

// An agent retrying /send through a blob store outage used up its daily quota on messages
// that were never stored, and could not send for 24 hours once the store was back.
describe.each(sqlDatabases())('send quota through a blob store outage on $name', ({ create }) => {
  let t: PostboxTestServer;
  let cleanup: () => Promise<void>;
  let storeDown = false;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startPostboxTestServer({
      db: fixture.db,
      postboxConfig: { smtp: { port: 0 } },
      wrapBlobStore: (store) => ({
        ...store,
        async put(options) {
          if (storeDown) throw new Error('The blob store is unreachable');
          return store.put(options);
        },
      }),
    });
  });

  afterAll(async () => {
    await t?.stop();
    await cleanup?.();
  });

  it('gives back the unit of every send that failed, so the whole quota is there once the store answers', async () => {
    const send = (subject: string) =>
      t.postbox('send', { agent_id: 'alice', from: alice, to: 'x@example.org', subject, body: 'b' }, 'alice');
    expect((await t.server.call('agent-identity/settings/set', { key: 'postbox_send_quota_per_day', value: 2 }, t.bridge)).status).toBe(
      200,
    );
    try {
      storeDown = true;
      for (let attempt = 0; attempt < 4; attempt += 1) {
        const failed = await send(`attempt ${attempt}`);
        expect(failed.status).toBeGreaterThanOrEqual(500);
        expect(failed.body.error.code).toMatch(/^[a-z_]+$/);
      }
      storeDown = false;
      expect((await send('first')).body.status).toBe('queued');
      expect((await send('second')).body.status).toBe('queued');
      const over = await send('third');
      expect(over.status).toBe(429);
      const listed = await t.postbox('list', { agent_id: 'alice', direction: 'out' }, 'alice');
      expect(listed.body.messages.map((message: { subject: string }) => message.subject).sort()).toEqual(['first', 'second']);
    } finally {
      storeDown = false;
      await t.server.call('agent-identity/settings/set', { key: 'postbox_send_quota_per_day', value: 100 }, t.bridge);
    }
  });
});
