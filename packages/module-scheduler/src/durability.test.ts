import { type Clock, createHttpDelivery, type HttpDelivery, newMasterKey } from '@agentinfra/core';
import { type ReopenableDatabase, reopenableDatabases } from '@agentinfra/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CallbackReceiver, startCallbackReceiver } from './test-support/callback-receiver.js';
import { cronOnceIn, type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The core job runner's lease (ms): a crashed process's claim is taken over once it has passed. */
const LEASE_MS = 30_000;

/**
 * What an operator does to a running scheduler: kill it mid-callback, point
 * it at a receiver slower than the timeout, delete a job mid-callback, and
 * hold an `@every` callback longer than the interval.
 */
describe.each(reopenableDatabases())('agent-scheduler durability on $name', ({ create }) => {
  let store: ReopenableDatabase;
  let receiver: CallbackReceiver;
  const servers: SchedulerTestServer[] = [];
  const masterKey = newMasterKey();

  const start = async (
    options: { clock?: Clock; delivery?: HttpDelivery; shutdownGraceMs?: number; schedulerConfig?: Record<string, unknown> } = {},
  ) => {
    const server = await startSchedulerTestServer({
      db: store.open(),
      agents: false,
      masterKey,
      schedulerConfig: { minIntervalMs: 1_000, ...options.schedulerConfig },
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.delivery ? { delivery: options.delivery } : {}),
      ...(options.shutdownGraceMs === undefined ? {} : { shutdownGraceMs: options.shutdownGraceMs }),
    });
    servers.push(server);
    return server;
  };
  const put = (server: SchedulerTestServer, name: string, body: Record<string, unknown>) =>
    server.scheduler('job/put', { agent_id: 'alice', name, callback_url: `${receiver.url}/${name}`, ...body }, 'alice');
  const runsOf = async (server: SchedulerTestServer, name: string) =>
    (await server.scheduler('runs/list', { agent_id: 'alice', name }, 'alice')).body.runs as Array<Record<string, unknown>>;

  beforeAll(async () => {
    store = await create();
    receiver = await startCallbackReceiver();
    // Creates the agents once; every test's servers then share the store.
    const setup = await startSchedulerTestServer({ db: store.open(), jobs: { enabled: false }, masterKey });
    await setup.server.stop();
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.server.stop();
  });
  afterAll(async () => {
    await receiver?.close();
    await store?.cleanup();
  });

  it('a process killed mid-callback: the next process delivers the run again with the same webhook-id, one run in the history', async () => {
    // SIGKILL, in process: the first server's callback never ends (its delivery ignores the shutdown's abort), so
    // stopping that server leaves what a killed process leaves: the run `running`, its queue job leased, nothing
    // more written by it.
    const real = createHttpDelivery({ allowPrivate: true });
    const deaf: HttpDelivery = {
      checkTarget: (url) => real.checkTarget(url),
      send: ({ signal: _ignored, ...message }) => real.send(message),
    };
    const first = await start({ delivery: deaf, shutdownGraceMs: 50 });
    const held: Array<() => void> = [];
    receiver.answer('/killed', (response, callback) => {
      if (receiver.on('/killed').indexOf(callback) === 0) held.push(() => response.writeHead(200).end('late'));
      else response.writeHead(200).end('ok');
    });
    const { cadence, at } = cronOnceIn(600);
    expect((await put(first, 'killed', { cadence, max_attempts: 3 })).status).toBe(200);
    await receiver.waitFor(() => receiver.on('/killed').length === 1, at - Date.now() + 5_000, 'the first delivery');
    await first.server.stop();
    servers.splice(servers.indexOf(first), 1);
    const left = store.open();
    const lostState = await left
      .knex('scheduler_runs as r')
      .join('core_jobs as q', 'q.id', 'r.queue_id')
      .select('r.status', 'r.attempts', 'q.status as queue_status');
    await left.close();
    expect(lostState).toEqual([{ status: 'running', attempts: 1, queue_status: 'running' }]);

    // Restarted once the dead process's lease has run out (the clock moved past it rather than the test waiting 30 s).
    const clock = { now: () => Date.now() + LEASE_MS + 1_000 };
    const second = await start({ clock });
    await receiver.waitFor(() => receiver.on('/killed').length === 2, 5_000, 'the delivery by the restarted process');
    const [lost, again] = receiver.on('/killed');
    expect(again?.headers['webhook-id']).toBe(lost?.headers['webhook-id']);
    expect(again?.json.data).toMatchObject({ run_id: lost?.json.data.run_id, scheduled_for: lost?.json.data.scheduled_for, attempt: 2 });
    await receiver.waitFor(async () => (await runsOf(second, 'killed'))[0]?.status === 'succeeded', 5_000, 'the run to succeed');
    const runs = await runsOf(second, 'killed');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ id: lost?.json.data.run_id, status: 'succeeded', attempts: 2, error: null });
    for (const release of held) release();
  });

  it('a 2xx answered after the callback timeout fails the attempt: retried with the same webhook-id, failed after the last', async () => {
    const server = await start({ schedulerConfig: { callbackTimeoutMs: 300 } });
    receiver.answer('/late', (response) => setTimeout(() => response.writeHead(200).end('late'), 700));
    const { cadence, at } = cronOnceIn(600);
    expect((await put(server, 'late', { cadence, max_attempts: 2 })).status).toBe(200);
    await receiver.waitFor(async () => (await runsOf(server, 'late'))[0]?.status === 'failed', at - Date.now() + 8_000, 'the run to fail');
    const calls = receiver.on('/late');
    expect(calls.map((callback) => callback.json.data.attempt)).toEqual([1, 2]);
    expect(new Set(calls.map((callback) => callback.headers['webhook-id']))).toEqual(new Set([calls[0]?.json.data.run_id]));
    const runs = await runsOf(server, 'late');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'failed', attempts: 2, error: `Delivery to ${receiver.url} timed out after 300 ms.` });
  });

  it('a job deleted while its callback is in flight gets no further delivery, though that callback then fails', async () => {
    const server = await start();
    const held: Array<() => void> = [];
    receiver.answer('/deleted', (response) => held.push(() => response.writeHead(500).end('no')));
    const { cadence, at } = cronOnceIn(600);
    const created = await put(server, 'deleted', { cadence, max_attempts: 5 });
    expect(created.status).toBe(200);
    await receiver.waitFor(() => held.length === 1, at - Date.now() + 5_000, 'the first delivery');
    expect((await server.scheduler('job/delete', { agent_id: 'alice', name: 'deleted' }, 'alice')).status).toBe(200);
    for (const release of held) release();
    // The failed attempt goes back to the queue for a retry; that retry runs, finds the job gone and calls nobody.
    const queueJobs = () =>
      server.server.kernel.sql
        .knex('core_jobs')
        .where('dedupe_key', 'like', `scheduler:${created.body.job_id}:fire:%`)
        .select('status', 'attempts') as Promise<Array<{ status: string; attempts: number }>>;
    await receiver.waitFor(
      async () => (await queueJobs()).some((job) => job.status === 'succeeded' && job.attempts >= 2),
      5_000,
      'the retry to run',
    );
    await sleep(300);
    expect(receiver.on('/deleted')).toHaveLength(1);
    expect((await queueJobs()).filter((job) => job.status === 'queued' || job.status === 'running')).toEqual([]);
  });

  it('an @every callback held past the interval: the next instants fire on the anchor grid, each once', async () => {
    const server = await start();
    // The first callback takes 3.5 s to answer (longer than three intervals), the others answer at once.
    receiver.answer('/slow', (response, callback) => {
      if (receiver.on('/slow').indexOf(callback) === 0) setTimeout(() => response.writeHead(200).end('slow'), 3_500);
      else response.writeHead(200).end('ok');
    });
    const created = await put(server, 'slow', { cadence: '@every 1s' });
    expect(created.status).toBe(200);
    const firstAt = Date.parse(created.body.next_run_at);
    await receiver.waitFor(() => receiver.on('/slow').length >= 6, 10_000, 'six fires');
    await server.scheduler('job/pause', { agent_id: 'alice', name: 'slow' }, 'alice');
    const calls = receiver.on('/slow');
    const instants = calls.map((callback) => Date.parse(callback.json.data.scheduled_for));
    // On the grid counted from the anchor, each instant once (a late claim may pass over one, never repeat one).
    for (const instant of instants) expect((instant - firstAt) % 1_000).toBe(0);
    expect(instants).toEqual([...new Set(instants)].sort((a, b) => a - b));
    expect(new Set(calls.map((callback) => callback.headers['webhook-id'])).size).toBe(calls.length);
    // The instants after the held one fired while it was still held, on time rather than after it.
    const [slow, next] = calls;
    expect(instants[1]).toBe(firstAt + 1_000);
    expect(next?.receivedAt).toBeLessThan((slow?.receivedAt ?? 0) + 3_500);
    await receiver.waitFor(async () => (await runsOf(server, 'slow')).every((run) => run.status === 'succeeded'), 5_000, 'runs to end');
    const runs = await runsOf(server, 'slow');
    expect(runs.map((run) => run.attempts)).toEqual(runs.map(() => 1));
  });
});
