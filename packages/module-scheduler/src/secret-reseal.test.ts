import { createAesGcmSecretBox, newMasterKey, newWebhookSecret, type SqlDatabase } from '@agentinfra/core';
import { reopenableDatabases } from '@agentinfra/testkit';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { JOBS } from './job-rows.js';
import { schedulerModule } from './module.js';
import { RESEAL_QUEUE_JOB } from './queue-keys.js';
import type { SchedulerService } from './service.js';
import { startCallbackReceiver } from './test-support/callback-receiver.js';
import { type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

const sealedSecrets = async (db: SqlDatabase) =>
  ((await db.knex(JOBS).select('secret_sealed').orderBy('agent_id')) as Array<{ secret_sealed: string }>).map((row) => row.secret_sealed);

describe.each(reopenableDatabases())('agent-scheduler master key rotation on $name', ({ create }) => {
  it('reseals callback secrets sealed with the previous master key, so callbacks are still signed once only the new key is configured', async () => {
    const store = await create();
    const inspect = store.open();
    const receiver = await startCallbackReceiver();
    const running: SchedulerTestServer[] = [];
    const start = async (options: { masterKey: string; previousMasterKeys?: string[]; agents: boolean; jobs: boolean }) => {
      const server = await startSchedulerTestServer({ db: store.open(), ...options, jobs: { enabled: options.jobs } });
      running.push(server);
      return server;
    };
    const stop = async (server: SchedulerTestServer) => {
      running.splice(running.indexOf(server), 1);
      await server.server.stop();
    };
    const [oldKey, newKey] = [newMasterKey(), newMasterKey()];
    try {
      const first = await start({ masterKey: oldKey, agents: true, jobs: false });
      const secrets = { alice: newWebhookSecret(), bob: newWebhookSecret() };
      for (const agent of ['alice', 'bob'] as const) {
        const put = await first.scheduler(
          'job/put',
          { agent_id: agent, name: 'tick', cadence: '@every 2s', callback_url: `${receiver.url}/${agent}`, secret: secrets[agent] },
          agent,
        );
        expect(put.status).toBe(200);
      }
      await stop(first);
      const current = createAesGcmSecretBox({ masterKey: newKey, previousMasterKeys: [oldKey] });
      expect((await sealedSecrets(inspect)).map((sealed) => current.needsReseal(sealed))).toEqual([true, true]);

      const rotated = await start({ masterKey: newKey, previousMasterKeys: [oldKey], agents: false, jobs: false });
      const job = schedulerModule.jobs?.find((candidate) => candidate.name === RESEAL_QUEUE_JOB);
      expect(job?.name).toBe('scheduler.reseal-secrets');
      expect(job?.schedule).toEqual({ every: 3_600_000 });
      const service = rotated.server.kernel.service<SchedulerService>('agent-scheduler');
      await job?.run({ payload: null, attempt: 1, scheduledFor: null, signal: new AbortController().signal, service });
      expect((await sealedSecrets(inspect)).map((sealed) => current.needsReseal(sealed))).toEqual([false, false]);
      expect(await service.resealSecrets()).toBe(0);
      await stop(rotated);

      // Only the new key: the queued fires open the resealed secrets and sign with them.
      await start({ masterKey: newKey, agents: false, jobs: true });
      await receiver.waitFor(() => receiver.on('/alice').length >= 1 && receiver.on('/bob').length >= 1, 10_000, 'a callback of each job');
      for (const agent of ['alice', 'bob'] as const) {
        const [callback] = receiver.on(`/${agent}`);
        expect(callback?.json.data.job.agent_id).toBe(agent);
        expect(() => new Webhook(secrets[agent]).verify(callback?.body ?? '', callback?.headers ?? {})).not.toThrow();
      }
    } finally {
      for (const server of running) await server.server.stop();
      await inspect.close();
      await receiver.close();
      await store.cleanup();
    }
  }, 30_000);
});
