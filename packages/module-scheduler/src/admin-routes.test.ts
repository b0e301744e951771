import { newWebhookSecret } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallbackReceiver, startCallbackReceiver } from './test-support/callback-receiver.js';
import { type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

// #16: the console shows jobs and runs across agents, and retries failed runs, through these bridge-key routes.
describe.each(sqlDatabases())('agent-scheduler operator routes on $name', ({ create }) => {
  let t: SchedulerTestServer;
  let receiver: CallbackReceiver;
  let cleanup: () => Promise<void>;
  const bridge = () => ({ credential: t.server.bridgeKey });
  let failedRun: string;

  const put = (agent: 'alice' | 'bob', name: string, cadence: string, path: string) =>
    t.scheduler(
      'job/put',
      { agent_id: agent, name, cadence, callback_url: `${receiver.url}${path}`, secret: newWebhookSecret(), max_attempts: 1 },
      agent,
    );

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    receiver = await startCallbackReceiver();
    receiver.answer('/broken', 500);
    t = await startSchedulerTestServer({ db: fixture.db });
    expect((await put('alice', 'broken', '@every 1s', '/broken')).status).toBe(200);
    expect((await put('bob', 'nightly', '0 3 * * *', '/nightly')).status).toBe(200);
    expect((await put('alice', 'digest', '0 8 * * 1', '/digest')).status).toBe(200);
    expect((await t.scheduler('job/pause', { agent_id: 'alice', name: 'digest' }, 'alice')).status).toBe(200);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const runs = await t.scheduler('runs/list', { agent_id: 'alice', name: 'broken' }, 'alice');
      const failed = runs.body.runs.find((run: { status: string }) => run.status === 'failed');
      if (failed) {
        failedRun = failed.id;
        break;
      }
      if (Date.now() > deadline) throw new Error('no failed run');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await t.scheduler('job/pause', { agent_id: 'alice', name: 'broken' }, 'alice')).status).toBe(200);
  });

  afterAll(async () => {
    await t?.server.stop();
    await receiver?.close();
    await cleanup?.();
  });

  it('lists jobs across agents with cadence, state, next run and latest run', async () => {
    const first = await t.scheduler('admin/jobs/list', { limit: 2 }, bridge());
    expect(first.status).toBe(200);
    expect(first.body.jobs.map((job: { agent_id: string; name: string; status: string }) => [job.agent_id, job.name, job.status])).toEqual([
      ['alice', 'broken', 'paused'],
      ['alice', 'digest', 'paused'],
    ]);
    expect(first.body.jobs[0].last_run).toEqual(expect.objectContaining({ status: 'failed', error: expect.stringContaining('500') }));
    expect(JSON.stringify(first.body)).not.toMatch(/whsec_|secret/);
    const rest = await t.scheduler('admin/jobs/list', { limit: 2, cursor: first.body.next_cursor }, bridge());
    expect(rest.body.jobs).toEqual([
      expect.objectContaining({
        agent_id: 'bob',
        name: 'nightly',
        cadence: '0 3 * * *',
        status: 'active',
        next_run_at: expect.any(String),
        last_run: null,
      }),
    ]);
    const paused = await t.scheduler('admin/jobs/list', { status: 'active' }, bridge());
    expect(paused.body.jobs.map((job: { name: string }) => job.name)).toEqual(['nightly']);
  });

  it('lists failed runs across jobs and counts failing jobs', async () => {
    const failed = await t.scheduler('admin/runs/list', { status: 'failed' }, bridge());
    expect(failed.body.runs[0]).toEqual(
      expect.objectContaining({ job_name: 'broken', agent_id: 'alice', status: 'failed', attempts: 1, max_attempts: 1, retries: 0 }),
    );
    const summary = await t.scheduler('admin/summary', {}, bridge());
    expect(summary.body).toEqual(expect.objectContaining({ jobs: 3, active: 1, paused: 2, failing: 1 }));
    expect(summary.body.runs_failed_24h).toBeGreaterThanOrEqual(1);
  });

  it('retries a failed run with the bridge key; the retry shows in the run list', async () => {
    receiver.answer('/broken', 204);
    const retried = await t.scheduler('runs/retry', { agent_id: 'alice', run_id: failedRun }, bridge());
    expect(retried.body).toEqual({ run_id: failedRun, status: 'queued' });
    const deadline = Date.now() + 10_000;
    let run: { status: string; retries: number } | undefined;
    while (Date.now() < deadline) {
      const runs = await t.scheduler('admin/runs/list', { agent_id: 'alice' }, bridge());
      run = runs.body.runs.find((entry: { run_id: string }) => entry.run_id === failedRun);
      if (run?.status === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(run).toEqual(expect.objectContaining({ status: 'succeeded', retries: 1 }));
    expect((await t.scheduler('admin/runs/list', {}, 'alice')).status).toBe(403);
  });
});
