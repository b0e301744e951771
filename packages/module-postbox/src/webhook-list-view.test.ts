import { sqlDatabases } from '@agentinfra/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { usePostboxServer } from './test-support/use-postbox-server.js';

/** A receiver that authenticates deliveries by a token in the query string too (a closed port: nothing is delivered). */
const webhookUrl = 'http://127.0.0.1:9/hooks/mail?token=tk_receiver_only#frag';

describe.each(sqlDatabases())('/webhook/list URLs by caller on $name', ({ create }) => {
  const t = usePostboxServer(create, { postboxConfig: { smtp: { port: 0 } } });

  beforeAll(async () => {
    const registered = await t.postbox('webhook/register', { agent_id: 'alice', url: webhookUrl }, 'alice');
    expect(registered.status).toBe(200);
  });

  const delegate = async (scope: string[]) => {
    const response = await t.server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope, expires_at: new Date(Date.now() + 86_400_000).toISOString() },
      { credential: t.keys.alice },
    );
    expect(response.status).toBe(200);
    return { credential: response.body.token as string };
  };
  const urlsSeenBy = async (as: 'alice' | { credential: string }) => {
    const response = await t.postbox('webhook/list', { agent_id: 'alice' }, as);
    expect(response.status).toBe(200);
    return response.body.webhooks.map((webhook: { url: string }) => webhook.url);
  };

  it('shows a delegation holding only postbox.read origin and path, and the callers that may change webhooks the whole URL', async () => {
    const reader = await delegate(['postbox.read']);
    expect(await urlsSeenBy(reader)).toEqual(['http://127.0.0.1:9/hooks/mail']);
    const readerList = await t.postbox('webhook/list', { agent_id: 'alice' }, reader);
    expect(JSON.stringify(readerList.body)).not.toContain('tk_receiver_only');
    expect(readerList.body.webhooks[0]).toMatchObject({ events: expect.any(Array), rotated_at: null, previous_expires_at: null });

    expect(await urlsSeenBy(await delegate(['postbox.read', 'postbox.admin']))).toEqual([webhookUrl]);
    expect(await urlsSeenBy('alice')).toEqual([webhookUrl]);
    expect(await urlsSeenBy(t.bridge)).toEqual([webhookUrl]);
    // A delegation without postbox.read cannot list at all; /admin/webhooks/list takes the bridge key only.
    expect((await t.postbox('webhook/list', { agent_id: 'alice' }, await delegate(['postbox.admin']))).status).toBe(403);
    expect((await t.postbox('admin/webhooks/list', { agent_id: 'alice' }, reader)).status).toBe(403);
  });
});
