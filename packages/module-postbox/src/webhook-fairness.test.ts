import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';
import { startWebhookReceiver, type WebhookReceiver, waitFor } from './test-support/webhook-receiver.js';
import { WEBHOOK_JOB } from './webhooks.js';

/** Milliseconds a delivery to the receiver that never answers waits: far longer than the test waits for bob's delivery. */
const WEBHOOK_TIMEOUT_MS = 30_000;
/** Deliveries to alice's dead receiver: more than the test kernel's eight job slots. */
const STUCK = 12;

let sequence = 0;
const mail = (to: string) => ({
  to: `${to}@${MAIL_DOMAIN}`,
  from: 'news@shop.example',
  subject: `Order ${++sequence} shipped`,
  body: 'Your order is on its way and should arrive on Thursday.',
  headers: { 'message-id': `<fair-${sequence}-${Date.now()}@shop.example>` },
});

// One agent's webhook receiver that never answers must not delay other agents' deliveries:
// its deliveries share one fairness group capped at `jobs.groupConcurrency` (2) jobs in flight.
describe.each(sqlDatabases())('postbox webhook fairness on $name', ({ create }) => {
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    receiver.answer('/dead', 'never');
  });
  const t = usePostboxServer(create, {
    postboxConfig: { smtp: { port: 0 }, webhookTimeoutMs: WEBHOOK_TIMEOUT_MS },
    shutdownGraceMs: 200,
  });
  // Registered after the server's, so it runs first (afterAll hooks run in reverse): closing the receiver first ends
  // the hanging deliveries, so the server stops at once.
  afterAll(async () => {
    await receiver?.close();
  });

  const register = async (agent: 'alice' | 'bob', path: string) => {
    const response = await t.postbox('webhook/register', { agent_id: agent, url: `${receiver.url}${path}` }, agent);
    expect(response.status).toBe(200);
  };
  const ingest = async (to: 'alice' | 'bob') => {
    const response = await t.postbox('ingest', mail(to), t.bridge);
    expect(response.status).toBe(200);
    return (response.body as { id: string }).id;
  };

  it("delivers bob's webhook at once while alice's receiver leaves twelve deliveries hanging", async () => {
    await register('alice', '/dead');
    await register('bob', '/bob');
    for (let i = 0; i < STUCK; i += 1) await ingest('alice');
    await waitFor(() => receiver.on('/dead').length >= 2, "alice's first deliveries");

    const began = Date.now();
    const id = await ingest('bob');
    await waitFor(() => receiver.on('/bob').some((delivery) => delivery.json?.data?.id === id), "bob's delivery", 5_000);
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(receiver.on('/dead')).toHaveLength(2);

    const groups = (await t.db.knex('core_jobs').where({ name: WEBHOOK_JOB }).select('job_group')) as Array<{ job_group: string }>;
    expect(new Set(groups.map((row) => row.job_group))).toEqual(new Set([`${WEBHOOK_JOB}:alice`, `${WEBHOOK_JOB}:bob`]));
    expect(groups.filter((row) => row.job_group === `${WEBHOOK_JOB}:alice`)).toHaveLength(STUCK);
  });
});
