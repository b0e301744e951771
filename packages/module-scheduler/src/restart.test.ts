import { type Clock, newMasterKey, newWebhookSecret } from '@agentinfra/core';
import { type ReopenableDatabase, reopenableDatabases } from '@agentinfra/testkit';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { INTERRUPTED_ERROR } from './reconcile.js';
import type { SchedulerService } from './service.js';
import { type CallbackReceiver, startCallbackReceiver } from './test-support/callback-receiver.js';
import { cronOnceIn, type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

/** A clock the test moves forward: "the server was down for a while". */
function shiftedClock(): Clock & { offsetMs: number } {
  const clock = { offsetMs: 0, now: () => Date.now() + clock.offsetMs };
  return clock;
}

describe.each(reopenableDatabases())('agent-scheduler across a restart on $name', ({ create }) => {
  let store: ReopenableDatabase;
  let receiver: CallbackReceiver;
  const servers: SchedulerTestServer[] = [];
  const masterKey = newMasterKey();

  const start = async (clock: Clock, options: { agents: boolean; jobs: boolean; shutdownGraceMs?: number }) => {
    const server = await startSchedulerTestServer({
      db: store.open(),
      clock,
      agents: options.agents,
      jobs: { enabled: options.jobs },
      ...(options.shutdownGraceMs === undefined ? {} : { shutdownGraceMs: options.shutdownGraceMs }),
      schedulerConfig: { minIntervalMs: 1_000, missedAfterMs: 2_000 },
      masterKey,
    });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    store = await create();
    receiver = await startCallbackReceiver();
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.server.stop();
  });
  afterAll(async () => {
    await receiver?.close();
    await store?.cleanup();
  });

  it('loses no fire across a downtime: catch_up "once" runs one catch-up run for all missed instants, "skip" drops them', async () => {
    const clock = shiftedClock();
    const before = await start(clock, { agents: true, jobs: false });
    const secret = newWebhookSecret();
    const put = async (name: string, catchUp: 'once' | 'skip') => {
      const response = await before.scheduler(
        'job/put',
        { agent_id: 'alice', name, cadence: '@every 10s', callback_url: `${receiver.url}/${name}`, secret, catch_up: catchUp },
        'alice',
      );
      expect(response.status).toBe(200);
      return Date.parse(response.body.next_run_at);
    };
    const onceFirst = await put('once', 'once');
    const skipFirst = await put('skip', 'skip');
    await before.server.stop();
    servers.length = 0;

    // Down until 22 s after the first instant: it and the next two pass while no process runs
    // jobs. Set from the first instant, not from now, so that a slow put, stop or start on a
    // loaded host does not carry the clock past the fourth instant too.
    clock.offsetMs = onceFirst + 22_000 - Date.now();
    const after = await start(clock, { agents: false, jobs: true });
    await receiver.waitFor(() => receiver.on('/once').length >= 1, 5_000, 'the catch-up run');
    const [catchUp] = receiver.on('/once');
    expect(catchUp?.json.data.scheduled_for).toBe(new Date(onceFirst).toISOString());
    expect(() => new Webhook(secret).verify(catchUp?.body ?? '', catchUp?.headers ?? {})).not.toThrow();

    // The chains continue after "now": the fourth instants of both jobs, about 8 s of real time away.
    await receiver.waitFor(() => receiver.on('/once').length >= 2 && receiver.on('/skip').length >= 1, 20_000, 'the next fires');
    const list = async (name: string) =>
      (
        (await after.scheduler('runs/list', { agent_id: 'alice', name }, 'alice')).body.runs as Array<{
          scheduled_for: string;
          status: string;
        }>
      ).map((run) => run.scheduled_for);
    expect(await list('once')).toEqual([new Date(onceFirst + 30_000).toISOString(), new Date(onceFirst).toISOString()]);
    expect(await list('skip')).toEqual([new Date(skipFirst + 30_000).toISOString()]);
    expect(receiver.on('/once').map((callback) => callback.json.data.scheduled_for)).toEqual([
      new Date(onceFirst).toISOString(),
      new Date(onceFirst + 30_000).toISOString(),
    ]);
  });

  it('a shutdown hands an in-flight callback back uncounted: a run with max_attempts 1 is delivered again by the next process', async () => {
    const first = await start(shiftedClock(), { agents: false, jobs: true, shutdownGraceMs: 200 });
    const secret = newWebhookSecret();
    const { cadence, at } = cronOnceIn(600);
    // The first delivery hangs until the receiver is told to answer; the next ones succeed.
    const held: Array<() => void> = [];
    receiver.answer('/interrupted', (response, callback) => {
      if (receiver.on('/interrupted').indexOf(callback) > 0) response.writeHead(200).end('ok');
      else held.push(() => response.writeHead(200).end('late'));
    });
    const put = await first.scheduler(
      'job/put',
      { agent_id: 'alice', name: 'interrupted', cadence, callback_url: `${receiver.url}/interrupted`, secret, max_attempts: 1 },
      'alice',
    );
    expect(put.status).toBe(200);
    await receiver.waitFor(() => receiver.on('/interrupted').length === 1, at - Date.now() + 5_000, 'the first delivery');
    await first.server.stop();
    servers.splice(servers.indexOf(first), 1);
    const interrupted = (
      await store
        .open()
        .knex('scheduler_runs as r')
        .join('scheduler_jobs as j', 'j.id', 'r.job_id')
        .where('j.name', 'interrupted')
        .select('r.status', 'r.attempts')
    ).map((run: { status: string; attempts: number }) => [run.status, run.attempts]);
    expect(interrupted).toEqual([['queued', 0]]);

    const second = await start(shiftedClock(), { agents: false, jobs: true });
    await receiver.waitFor(() => receiver.on('/interrupted').length === 2, 5_000, 'the delivery by the next process');
    const [before, again] = receiver.on('/interrupted');
    expect(again?.headers['webhook-id']).toBe(before?.headers['webhook-id']);
    expect(again?.json.data.attempt).toBe(1);
    const runs = async () => (await second.scheduler('runs/list', { agent_id: 'alice', name: 'interrupted' }, 'alice')).body.runs;
    await receiver.waitFor(async () => (await runs())[0]?.status === 'succeeded', 5_000, 'the run to succeed');
    expect((await runs())[0]).toEqual(expect.objectContaining({ status: 'succeeded', attempts: 1, error: null }));
    for (const release of held) release();
  });

  it('reconcile repairs a broken fire chain and fails a run whose queue job ended, and leaves healthy backlogs alone', async () => {
    const clock = shiftedClock();
    const server = await start(clock, { agents: false, jobs: false });
    const knex = server.server.kernel.sql.knex;
    const service = server.server.kernel.service<SchedulerService>('agent-scheduler');
    const put = async (name: string) =>
      (
        await server.scheduler(
          'job/put',
          { agent_id: 'bob', name, cadence: '@every 10s', callback_url: `${receiver.url}/${name}`, secret: newWebhookSecret() },
          'bob',
        )
      ).body as { job_id: string; next_run_at: string };
    const broken = await put('broken');
    const backlog = await put('backlog');
    const brokenRow = await knex('scheduler_jobs').where({ id: broken.job_id }).first();
    await knex('core_jobs').where({ id: brokenRow.next_fire_queue_id }).update({ status: 'failed', finished_at: clock.now() });
    const now = clock.now();
    await knex('scheduler_runs').insert({
      id: 'run_orphan',
      job_id: backlog.job_id,
      agent_id: 'bob',
      scheduled_for: now - 1_000,
      status: 'running',
      attempts: 1,
      max_attempts: 3,
      series: 0,
      error: null,
      queue_id: brokenRow.next_fire_queue_id,
      started_at: now - 1_000,
      finished_at: null,
      created_at: now - 1_000,
      updated_at: now - 1_000,
    });

    expect(await service.reconcile()).toEqual({ chainsRepaired: 0, runsFailed: 0 });
    clock.offsetMs = 6 * 60_000;
    expect(await service.reconcile()).toEqual({ chainsRepaired: 1, runsFailed: 1 });
    const repaired = await knex('scheduler_jobs').where({ id: broken.job_id }).first();
    expect(Number(repaired.next_run_at)).toBeGreaterThan(clock.now());
    expect(repaired.next_fire_queue_id).not.toBe(brokenRow.next_fire_queue_id);
    expect((await knex('core_jobs').where({ id: repaired.next_fire_queue_id }).first()).status).toBe('queued');
    const untouched = await knex('scheduler_jobs').where({ id: backlog.job_id }).first();
    expect(new Date(Number(untouched.next_run_at)).toISOString()).toBe(backlog.next_run_at);
    expect(await knex('scheduler_runs').where({ id: 'run_orphan' }).first()).toMatchObject({ status: 'failed', error: INTERRUPTED_ERROR });
    expect(await service.reconcile()).toEqual({ chainsRepaired: 0, runsFailed: 0 });
  });
});
