import type { ServerResponse } from 'node:http';
import { newWebhookSecret } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { SchedulerService } from './service.js';
import { type ReceivedCallback, startCallbackReceiver } from './test-support/callback-receiver.js';
import { cronOnceIn, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

const GRACE_MS = 2_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(sqlDatabases())('agent-scheduler secret rotation on $name', ({ create }) => {
  it('signs with the new and the replaced secret (new first) during the grace window, even mid-retry, then with the new one only', async () => {
    const { db, cleanup } = await create();
    const receiver = await startCallbackReceiver();
    const t = await startSchedulerTestServer({ db, schedulerConfig: { secretRotationGraceMs: GRACE_MS } });
    try {
      const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
      const verifies = (secret: string, callback: ReceivedCallback) => {
        try {
          new Webhook(secret).verify(callback.body, callback.headers);
          return true;
        } catch {
          return false;
        }
      };
      const held: ServerResponse[] = [];
      receiver.answer('/rot', (response) => void held.push(response));
      const { cadence } = cronOnceIn(1_000);
      const job = { agent_id: 'alice', name: 'rot', cadence, callback_url: `${receiver.url}/rot`, max_attempts: 5 };
      expect((await t.scheduler('job/put', { ...job, secret: oldSecret }, 'alice')).status).toBe(200);
      await receiver.waitFor(() => held.length === 1, 10_000, 'the first attempt');

      // The secret changes while attempt 1 is in flight; attempt 1 then fails.
      expect((await t.scheduler('job/put', { ...job, secret: newSecret }, 'alice')).status).toBe(200);
      receiver.answer('/rot', 200);
      held[0]?.writeHead(500).end();
      await receiver.waitFor(() => receiver.on('/rot').length === 2, 10_000, 'the second attempt');
      const [first, second] = receiver.on('/rot') as [ReceivedCallback, ReceivedCallback];
      expect(first.headers['webhook-signature']?.split(' ')).toHaveLength(1);
      expect([verifies(oldSecret, first), verifies(newSecret, first)]).toEqual([true, false]);
      expect(second.json.data.attempt).toBe(2);
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
      const signatures = second.headers['webhook-signature']?.split(' ') ?? [];
      expect(signatures).toHaveLength(2);
      expect([verifies(oldSecret, second), verifies(newSecret, second)]).toEqual([true, true]);
      const signedBy = (secret: string, signature: string) =>
        verifies(secret, { ...second, headers: { ...second.headers, 'webhook-signature': signature } });
      expect([signedBy(newSecret, signatures[0] as string), signedBy(oldSecret, signatures[1] as string)]).toEqual([true, true]);
      expect(second.headers['x-service-webhook-signature']).toBe(second.headers['webhook-signature']);

      // Putting the new secret again does not restart the window; once it has passed, only the new secret signs.
      expect((await t.scheduler('job/put', { ...job, secret: newSecret }, 'alice')).status).toBe(200);
      await sleep(GRACE_MS + 100);
      const runId = second.json.data.run_id as string;
      await receiver.waitFor(
        async () => (await t.scheduler('runs/list', { agent_id: 'alice', name: 'rot' }, 'alice')).body.runs[0]?.status === 'succeeded',
        10_000,
        'the run to succeed',
      );
      expect((await t.scheduler('runs/retry', { agent_id: 'alice', run_id: runId }, 'alice')).status).toBe(200);
      await receiver.waitFor(() => receiver.on('/rot').length === 3, 10_000, 'the retried run');
      const third = receiver.on('/rot')[2] as ReceivedCallback;
      expect(third.headers['webhook-signature']?.split(' ')).toHaveLength(1);
      expect([verifies(oldSecret, third), verifies(newSecret, third)]).toEqual([false, true]);

      // The hourly sweep forgets the replaced secret once its window has passed.
      await t.server.kernel.service<SchedulerService>('agent-scheduler').pruneRuns();
      expect(await db.knex('scheduler_jobs').select('previous_secret_sealed', 'secret_rotated_at').where({ name: 'rot' }).first()).toEqual({
        previous_secret_sealed: null,
        secret_rotated_at: null,
      });
    } finally {
      await t.server.stop();
      await receiver.close();
      await cleanup();
    }
  }, 30_000);

  it('generates a whsec_ secret for a new job put without one (returned once) and keeps it when the job is put again without one', async () => {
    const { db, cleanup } = await create();
    const receiver = await startCallbackReceiver();
    const t = await startSchedulerTestServer({ db });
    try {
      receiver.answer('/gen', 200);
      receiver.answer('/explicit', 200);
      const job = { agent_id: 'alice', name: 'gen', cadence: cronOnceIn(1_000).cadence, callback_url: `${receiver.url}/gen` };
      const first = await t.scheduler('job/put', job, 'alice');
      expect(first.status).toBe(200);
      const secret = first.body.secret as string;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

      const again = await t.scheduler('job/put', { ...job, max_attempts: 2 }, 'alice');
      expect(again.status).toBe(200);
      expect(again.body).not.toHaveProperty('secret');
      const explicit = await t.scheduler(
        'job/put',
        { ...job, name: 'explicit', callback_url: `${receiver.url}/explicit`, secret: newWebhookSecret() },
        'alice',
      );
      expect(explicit.body).not.toHaveProperty('secret');

      await receiver.waitFor(() => receiver.on('/gen').length >= 1, 10_000, 'the callback');
      const callback = receiver.on('/gen')[0] as ReceivedCallback;
      expect(callback.headers['webhook-signature']?.split(' ')).toHaveLength(1);
      expect(() => new Webhook(secret).verify(callback.body, callback.headers)).not.toThrow();
      const listed = await t.scheduler('job/list', { agent_id: 'alice' }, 'alice');
      expect(JSON.stringify(listed.body)).not.toContain(secret.slice('whsec_'.length));
    } finally {
      await t.server.stop();
      await receiver.close();
      await cleanup();
    }
  }, 30_000);
});
