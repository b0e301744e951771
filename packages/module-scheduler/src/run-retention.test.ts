import { newWebhookSecret } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { RUNS } from './job-rows.js';
import { schedulerModule } from './module.js';
import { PRUNE_RUNS_QUEUE_JOB } from './queue-keys.js';
import type { SchedulerService } from './service.js';
import { startCallbackReceiver } from './test-support/callback-receiver.js';
import { cronOnceIn, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

const DAY_MS = 86_400_000;

describe.each(sqlDatabases())('agent-scheduler run retention on $name', ({ create }) => {
  it('the hourly scheduler.prune-runs job deletes finished runs older than runRetentionDays and keeps the others', async () => {
    const { db, cleanup } = await create();
    const receiver = await startCallbackReceiver();
    const t = await startSchedulerTestServer({ db, schedulerConfig: { runRetentionDays: 7 } });
    try {
      const { cadence } = cronOnceIn(1_000);
      for (const name of ['old', 'recent', 'pending']) {
        const body = { agent_id: 'alice', name, cadence, callback_url: `${receiver.url}/${name}`, secret: newWebhookSecret() };
        expect((await t.scheduler('job/put', body, 'alice')).status).toBe(200);
      }
      const runsOf = async (name: string) => (await t.scheduler('runs/list', { agent_id: 'alice', name }, 'alice')).body.runs;
      await receiver.waitFor(
        async () => (await Promise.all(['old', 'recent', 'pending'].map(runsOf))).every((runs) => runs[0]?.status === 'succeeded'),
        10_000,
        'three finished runs',
      );
      const [old] = await runsOf('old');
      const [pending] = await runsOf('pending');
      const now = Date.now();
      await db
        .knex(RUNS)
        .where({ id: old.id })
        .update({ finished_at: now - 8 * DAY_MS });
      // An old run waiting for its next attempt is not finished: it stays.
      await db
        .knex(RUNS)
        .where({ id: pending.id })
        .update({ status: 'queued', finished_at: null, updated_at: now - 9 * DAY_MS });

      const job = schedulerModule.jobs?.find((candidate) => candidate.name === PRUNE_RUNS_QUEUE_JOB);
      expect(job?.schedule).toEqual({ every: 3_600_000 });
      const service = t.server.kernel.service<SchedulerService>('agent-scheduler');
      // A run whose signal aborted (its timeout passed) stops and leaves the runs as they are.
      const aborted = AbortSignal.abort(new Error('Timed out after 600000 ms.'));
      await expect(job?.run({ payload: null, attempt: 1, scheduledFor: null, signal: aborted, service })).rejects.toThrow(
        'Timed out after 600000 ms.',
      );
      expect(await runsOf('old')).toHaveLength(1);
      await job?.run({ payload: null, attempt: 1, scheduledFor: null, signal: new AbortController().signal, service });

      expect(await runsOf('old')).toEqual([]);
      expect(await runsOf('recent')).toHaveLength(1);
      expect(await runsOf('pending')).toHaveLength(1);
      expect(await service.pruneRuns()).toBe(0);
    } finally {
      await t.server.stop();
      await receiver.close();
      await cleanup();
    }
  }, 30_000);
});
