import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';
import { useWebhookReceiver, waitFor } from './test-support/webhook-receiver.js';
import { WEBHOOK_JOB } from './webhooks.js';

// A receiver that was down past every retry lost those events for good; the operator sends them again once it is fixed.
// Both engines: the retry is an UPDATE of core_jobs selected by dedupe-key prefix.
describe.each(sqlDatabases())('redelivering failed webhook deliveries on $name', ({ create }) => {
  const receiver = useWebhookReceiver();
  const t = usePostboxServer(create, { postboxConfig: { webhookMaxAttempts: 2 } });

  const register = async (path: string) => {
    const registered = await t.postbox('webhook/register', { agent_id: 'alice', url: `${receiver.url}${path}` }, 'alice');
    expect(registered.status).toBe(200);
    return registered.body.webhook_id as string;
  };
  const ingest = async (subject: string) => {
    const response = await t.postbox(
      'ingest',
      {
        to: `alice@${MAIL_DOMAIN}`,
        from: 'bob@example.test',
        subject,
        body: 'Hello.',
        headers: { 'message-id': `<${subject}@example.test>` },
      },
      t.bridge,
    );
    expect(response.status).toBe(200);
  };
  const failedJobs = async () =>
    Number((await t.db.knex('core_jobs').where({ name: WEBHOOK_JOB, status: 'failed' }).count({ n: '*' }).first())?.n);

  it('puts a webhook’s failed deliveries back in the queue, each with its first webhook-id, and no other webhook’s', async () => {
    receiver.answer('/down', 500);
    receiver.answer('/still-down', 500);
    const fixed = await register('/down');
    const broken = await register('/still-down');
    await ingest('first');
    await ingest('second');
    await waitFor(async () => (await failedJobs()) === 4, 'every delivery failed twice', 20_000);
    const firstIds = new Set(receiver.on('/down').map((delivery) => delivery.headers['webhook-id']));
    expect(firstIds.size).toBe(2);
    expect(receiver.on('/down')).toHaveLength(4);

    receiver.answer('/down', 204);
    const redelivered = await t.postbox('admin/webhooks/redeliver', { webhook_id: fixed }, t.bridge);
    expect(redelivered.status).toBe(200);
    expect(redelivered.body).toEqual({ webhook_id: fixed, agent_id: 'alice', requeued: 2 });
    await waitFor(() => receiver.on('/down').length === 6, 'two redeliveries');
    const again = receiver.on('/down').slice(4);
    expect(new Set(again.map((delivery) => delivery.headers['webhook-id']))).toEqual(firstIds);
    expect(again.map((delivery) => delivery.json.type)).toEqual(['message.received', 'message.received']);
    await waitFor(async () => (await failedJobs()) === 2, 'only the other webhook’s deliveries still failed');

    const listed = await t.postbox('admin/webhooks/list', { agent_id: 'alice' }, t.bridge);
    const lastOf = (id: string) => listed.body.webhooks.find((hook: { webhook_id: string }) => hook.webhook_id === id)?.last_delivery;
    expect(lastOf(fixed)).toMatchObject({ ok: true, status: 204 });
    expect(lastOf(broken)).toMatchObject({ ok: false, status: 500 });
    // Nothing failed is left for it; the other webhook still holds its two.
    expect((await t.postbox('admin/webhooks/redeliver', { webhook_id: fixed }, t.bridge)).body.requeued).toBe(0);
    expect(receiver.on('/still-down')).toHaveLength(4);
  });

  it('answers 404 for an unknown webhook, 400 for a malformed request and 403 to an agent', async () => {
    const unknown = await t.postbox('admin/webhooks/redeliver', { webhook_id: 'whk_unknown' }, t.bridge);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    expect((await t.postbox('admin/webhooks/redeliver', { webhook_id: 'x'.repeat(41) }, t.bridge)).status).toBe(400);
    expect((await t.postbox('admin/webhooks/redeliver', { webhook_id: 'whk_x', extra: 1 }, t.bridge)).status).toBe(400);
    expect((await t.postbox('admin/webhooks/redeliver', { webhook_id: 'whk_unknown' }, 'alice')).status).toBe(403);
  });
});
