import { JobLeaseLostError, newWebhookSecret, type SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAST_ATTEMPT_LOST } from './callback-run.js';
import type { SchedulerService } from './service.js';
import { type CallbackReceiver, type ReceivedCallback, startCallbackReceiver } from './test-support/callback-receiver.js';
import { cronOnceIn, type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(sqlDatabases())('agent-scheduler end to end on $name', ({ create }) => {
  let t: SchedulerTestServer;
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;
  let receiver: CallbackReceiver;

  const put = (body: Record<string, unknown>, as: 'alice' | 'bob' = 'alice') =>
    t.scheduler('job/put', { agent_id: as, secret: newWebhookSecret(), callback_url: `${receiver.url}/ok`, ...body }, as);
  const runsOf = async (name: string, as: 'alice' | 'bob' = 'alice') => {
    const response = await t.scheduler('runs/list', { agent_id: as, name }, as);
    expect(response.status).toBe(200);
    return response.body.runs as Array<Record<string, unknown>>;
  };
  const verify = (secret: string, callback: ReceivedCallback) => new Webhook(secret).verify(callback.body, callback.headers);

  beforeAll(async () => {
    const fixture = await create();
    db = fixture.db;
    cleanup = fixture.cleanup;
    receiver = await startCallbackReceiver();
    t = await startSchedulerTestServer({ db });
  });

  afterAll(async () => {
    await t?.server.stop();
    await receiver?.close();
    await cleanup?.();
  });

  it('fires an @every job with signed callbacks the standardwebhooks verifier accepts, and lists the runs newest first', async () => {
    const secret = newWebhookSecret();
    const before = Date.now();
    const response = await put({ name: 'tick', cadence: '@every 1s', secret, callback_url: `${receiver.url}/tick?source=test` });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      job_id: expect.stringMatching(/^job_[A-Za-z0-9_-]{22}$/),
      name: 'tick',
      next_run_at: expect.stringMatching(ISO_MS),
    });
    const firstAt = Date.parse(response.body.next_run_at);
    expect(firstAt - before).toBeGreaterThanOrEqual(900);
    expect(firstAt - before).toBeLessThan(5_000);
    expect(JSON.stringify(response.body)).not.toContain(secret.slice(6));

    await receiver.waitFor(() => receiver.on('/tick').length >= 3, 10_000, 'three ticks');
    expect((await t.scheduler('job/pause', { agent_id: 'alice', name: 'tick' }, 'alice')).body).toEqual({ name: 'tick', status: 'paused' });
    const ticks = receiver.on('/tick');
    for (const [index, callback] of ticks.entries()) {
      const payload = verify(secret, callback) as { type: string; timestamp: string; data: Record<string, unknown> };
      expect(payload).toEqual({
        type: 'job.run',
        timestamp: expect.stringMatching(ISO_MS),
        data: {
          job: { job_id: response.body.job_id, agent_id: 'alice', name: 'tick' },
          run_id: expect.stringMatching(/^run_/),
          scheduled_for: new Date(firstAt + index * 1000).toISOString(),
          attempt: 1,
        },
      });
      expect(callback.headers['webhook-id']).toBe(payload.data.run_id);
      expect(callback.headers['x-service-webhook-signature']).toBe(callback.headers['webhook-signature']);
      expect(callback.headers['x-service-webhook-timestamp']).toBe(callback.headers['webhook-timestamp']);
      expect(() => new Webhook(newWebhookSecret()).verify(callback.body, callback.headers)).toThrow();
    }

    // A run claimed just before the pause finishes after it.
    await expect.poll(async () => (await runsOf('tick')).every((run) => run.status === 'succeeded')).toBe(true);
    const runs = await runsOf('tick');
    expect(runs.length).toBeGreaterThanOrEqual(3);
    const instants = runs.map((run) => Date.parse(run.scheduled_for as string));
    expect(instants).toEqual([...instants].sort((a, b) => b - a));
    const firedIds = new Set(receiver.on('/tick').map((callback) => callback.json.data.run_id));
    for (const run of runs) {
      expect(run).toEqual({
        id: expect.stringMatching(/^run_/),
        scheduled_for: expect.stringMatching(ISO_MS),
        status: 'succeeded',
        attempts: 1,
        error: null,
        started_at: expect.stringMatching(ISO_MS),
        finished_at: expect.stringMatching(ISO_MS),
      });
      expect(firedIds.has(run.id)).toBe(true);
      expect(Date.parse(run.started_at as string)).toBeGreaterThanOrEqual(Date.parse(run.scheduled_for as string));
    }
    expect((await t.scheduler('runs/list', { agent_id: 'alice', name: 'tick', limit: 2 }, 'alice')).body.runs).toEqual(runs.slice(0, 2));

    const count = receiver.on('/tick').length;
    await sleep(1_500);
    expect(receiver.on('/tick').length).toBe(count);

    // Paused, the history stands still: pages of 2 follow one another and end with a null cursor.
    const all = await runsOf('tick');
    const paged: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { runs: unknown[]; next_cursor: string | null } } = await t.scheduler(
        'runs/list',
        { agent_id: 'alice', name: 'tick', limit: 2, cursor },
        'alice',
      );
      expect(page.status).toBe(200);
      paged.push(...page.body.runs);
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(paged).toEqual(all);
    const forged = await t.scheduler('runs/list', { agent_id: 'alice', name: 'tick', cursor: 'not-a-cursor' }, 'alice');
    expect(forged.status).toBe(400);
    expect(forged.body.error.details.fields[0].path).toBe('cursor');

    const resumedAt = Date.now();
    const resumed = await t.scheduler('job/resume', { agent_id: 'alice', name: 'tick' }, 'alice');
    expect(resumed.status).toBe(200);
    expect(resumed.body).toEqual({ name: 'tick', status: 'active', next_run_at: expect.stringMatching(ISO_MS) });
    // The next fire is after the resume (compared with when it was asked for: the answer may arrive in the same millisecond).
    expect(Date.parse(resumed.body.next_run_at)).toBeGreaterThan(resumedAt);
    await receiver.waitFor(() => receiver.on('/tick').length > count, 5_000, 'a tick after resume');
    expect((await t.scheduler('job/delete', { agent_id: 'alice', name: 'tick' }, 'alice')).body).toEqual({
      name: 'tick',
      status: 'deleted',
    });
  });

  it('retries a failing callback up to max_attempts, records failed, and /runs/retry succeeds once the receiver recovers', async () => {
    const secret = newWebhookSecret();
    receiver.answer('/flaky', 500);
    const { cadence } = cronOnceIn(1_200);
    const response = await put({ name: 'flaky', cadence, secret, callback_url: `${receiver.url}/flaky`, max_attempts: 3 });
    expect(response.status).toBe(200);

    let runs: Array<Record<string, unknown>> = [];
    await receiver.waitFor(
      async () => {
        runs = await runsOf('flaky');
        return runs[0]?.status === 'failed';
      },
      10_000,
      'the run to fail',
    );
    expect(runs).toHaveLength(1);
    const [run] = runs as [Record<string, unknown>];
    expect(run).toMatchObject({ status: 'failed', attempts: 3, error: 'HTTP 500', finished_at: expect.stringMatching(ISO_MS) });
    const attempts = receiver.on('/flaky');
    expect(attempts).toHaveLength(3);
    expect(attempts.map((callback) => callback.json.data.attempt)).toEqual([1, 2, 3]);
    expect(new Set(attempts.map((callback) => callback.headers['webhook-id']))).toEqual(new Set([run.id]));
    for (const callback of attempts) expect(() => verify(secret, callback)).not.toThrow();

    receiver.answer('/flaky', 204);
    const retried = await t.scheduler('runs/retry', { agent_id: 'alice', run_id: run.id }, 'alice');
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ run_id: run.id, status: 'queued' });
    await receiver.waitFor(async () => (await runsOf('flaky'))[0]?.status === 'succeeded', 10_000, 'the retried run to succeed');
    const after = await runsOf('flaky');
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: run.id, status: 'succeeded', attempts: 1, error: null, scheduled_for: run.scheduled_for });
    const last = receiver.on('/flaky').at(-1) as ReceivedCallback;
    expect(receiver.on('/flaky')).toHaveLength(4);
    expect(last.headers['webhook-id']).toBe(`${run.id}_1`);
    expect(verify(secret, last)).toMatchObject({ data: { run_id: run.id, attempt: 1 } });
  });

  // Review: an attempt that ended without an outcome (process stopped, queue job timed out) was run again past the
  // run's max_attempts, up to the queue's own attempt limit.
  it('fails a run whose last attempt ended without an outcome instead of calling once more', async () => {
    const response = await put({ name: 'lost', cadence: '@every 1h', max_attempts: 1, callback_url: `${receiver.url}/lost` });
    expect(response.status).toBe(200);
    const job = await db.knex('scheduler_jobs').where({ agent_id: 'alice', name: 'lost' }).first();
    const now = Date.now();
    const run = {
      id: 'run_lost',
      job_id: job.id,
      agent_id: 'alice',
      scheduled_for: now - 60_000,
      status: 'running',
      attempts: 1,
      max_attempts: 1,
      series: 0,
      error: null,
      queue_id: null,
      started_at: now - 60_000,
      finished_at: null,
      created_at: now - 60_000,
      updated_at: now - 60_000,
    };
    await db.knex('scheduler_runs').insert(run);
    const service = t.server.kernel.service<SchedulerService>('agent-scheduler');
    const payload = { kind: 'fire', job_id: job.id, epoch: Number(job.fire_epoch), scheduled_for: run.scheduled_for };
    await service.executeRun({ payload, signal: new AbortController().signal });
    expect(receiver.on('/lost')).toEqual([]);
    expect(await db.knex('scheduler_runs').where({ id: run.id }).first()).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: LAST_ATTEMPT_LOST,
    });
    await t.scheduler('job/delete', { agent_id: 'alice', name: 'lost' }, 'alice');
  });

  // Review: an attempt whose queue job lease went to another worker recorded its aborted callback over that worker's run.
  it('writes nothing for an attempt stopped because another worker took over its queue job', async () => {
    receiver.answer('/overtaken', () => undefined);
    const response = await put({ name: 'overtaken', cadence: '@every 1h', max_attempts: 3, callback_url: `${receiver.url}/overtaken` });
    expect(response.status).toBe(200);
    const job = await db.knex('scheduler_jobs').where({ agent_id: 'alice', name: 'overtaken' }).first();
    const now = Date.now();
    const run = {
      id: 'run_overtaken',
      job_id: job.id,
      agent_id: 'alice',
      scheduled_for: now - 60_000,
      status: 'queued',
      attempts: 0,
      max_attempts: 3,
      series: 1,
      error: null,
      queue_id: null,
      started_at: null,
      finished_at: null,
      created_at: now - 60_000,
      updated_at: now - 60_000,
    };
    await db.knex('scheduler_runs').insert(run);
    const service = t.server.kernel.service<SchedulerService>('agent-scheduler');
    const controller = new AbortController();
    const attempt = service.executeRun({ payload: { kind: 'retry', run_id: run.id, series: 1 }, signal: controller.signal });
    await receiver.waitFor(() => receiver.on('/overtaken').length === 1, 10_000, 'the callback to arrive');
    // What the worker that took the queue job over has written by now: its own attempt, running.
    const overtaken = { status: 'running', attempts: 2, updated_at: now + 1 };
    await db.knex('scheduler_runs').where({ id: run.id }).update(overtaken);
    controller.abort(new JobLeaseLostError());
    await expect(attempt).rejects.toBeInstanceOf(JobLeaseLostError);
    expect(await db.knex('scheduler_runs').where({ id: run.id }).first()).toMatchObject({ ...overtaken, error: null, finished_at: null });
    await t.scheduler('job/delete', { agent_id: 'alice', name: 'overtaken' }, 'alice');
  });

  it("queues an agent's fires and retries in the agent's fairness group", async () => {
    const { cadence } = cronOnceIn(1_200);
    const created = await put({ name: 'grouped', cadence, callback_url: `${receiver.url}/grouped` }, 'bob');
    expect(created.status).toBe(200);
    await receiver.waitFor(async () => (await runsOf('grouped', 'bob'))[0]?.status === 'succeeded', 10_000, 'the fire to succeed');
    const [run] = (await runsOf('grouped', 'bob')) as [Record<string, unknown>];
    expect((await t.scheduler('runs/retry', { agent_id: 'bob', run_id: run.id }, 'bob')).status).toBe(200);
    await receiver.waitFor(() => receiver.on('/grouped').length === 2, 10_000, 'the retried callback');
    const queued = (await db
      .knex('core_jobs')
      .where('dedupe_key', 'like', `scheduler:${created.body.job_id}:%`)
      .select('dedupe_key', 'job_group')) as Array<{ dedupe_key: string; job_group: string }>;
    expect(queued.some((row) => row.dedupe_key.includes(':fire:'))).toBe(true);
    expect(queued.some((row) => row.dedupe_key.includes(':retry:'))).toBe(true);
    expect(new Set(queued.map((row) => row.job_group))).toEqual(new Set(['scheduler.run:bob']));
  });

  it('answers 409 to /runs/retry while the run is running, and records a network error on the run', async () => {
    let release: (() => void) | undefined;
    receiver.answer('/slow', (response) => {
      release = () => response.writeHead(200).end();
    });
    const { cadence } = cronOnceIn(1_000);
    expect((await put({ name: 'slow', cadence, callback_url: `${receiver.url}/slow`, max_attempts: 1 })).status).toBe(200);
    let runs: Array<Record<string, unknown>> = [];
    await receiver.waitFor(
      async () => {
        runs = await runsOf('slow');
        return runs[0]?.status === 'running';
      },
      10_000,
      'the run to start',
    );
    const conflict = await t.scheduler('runs/retry', { agent_id: 'alice', run_id: runs[0]?.id }, 'alice');
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: 'conflict', message: expect.stringContaining('running') });
    // The run is marked running before its callback reaches the receiver: release it once it has arrived.
    await receiver.waitFor(async () => release !== undefined, 10_000, 'the slow callback to arrive');
    release?.();
    await receiver.waitFor(async () => (await runsOf('slow'))[0]?.status === 'succeeded', 10_000, 'the slow run to succeed');

    const closed = await startCallbackReceiver();
    await closed.close();
    const once = cronOnceIn(1_000);
    expect((await put({ name: 'unreachable', cadence: once.cadence, callback_url: `${closed.url}/gone`, max_attempts: 2 })).status).toBe(
      200,
    );
    await receiver.waitFor(async () => (await runsOf('unreachable'))[0]?.status === 'failed', 10_000, 'the unreachable run to fail');
    expect((await runsOf('unreachable'))[0]).toMatchObject({ attempts: 2, error: `Delivery to ${closed.url} failed: ECONNREFUSED.` });
  });

  it('upserts by (agent_id, name): the same cadence keeps the schedule, a new cadence reschedules, a put resumes a paused job', async () => {
    const first = await put({ name: 'upsert', cadence: '@every 1h' });
    const again = await put({ name: 'upsert', cadence: '@every 60m', max_attempts: 5 });
    expect(again.body).toEqual(first.body);
    const changed = await put({ name: 'upsert', cadence: '0 0 1 1 *' });
    expect(changed.body.job_id).toBe(first.body.job_id);
    expect(changed.body.next_run_at).toBe(`${new Date().getUTCFullYear() + 1}-01-01T00:00:00.000Z`);
    expect((await t.scheduler('job/pause', { agent_id: 'alice', name: 'upsert' }, 'alice')).body.status).toBe('paused');
    expect((await t.scheduler('job/pause', { agent_id: 'alice', name: 'upsert' }, 'alice')).body.status).toBe('paused');
    // issue #7: the fire cancelled by the pause must not block the same instant of the resumed chain.
    const resumed = await put({ name: 'upsert', cadence: '0 0 1 1 *' });
    expect(resumed.body).toEqual(changed.body);
    const bobs = await put({ name: 'upsert', cadence: '@every 1h' }, 'bob');
    expect(bobs.body.job_id).not.toBe(first.body.job_id);
    const queued = await db.knex('core_jobs').where('dedupe_key', 'like', `scheduler:${first.body.job_id}:%`).select('status');
    expect(queued.filter((row: { status: string }) => row.status === 'queued')).toHaveLength(1);
  });

  it('/job/delete cancels the queued fire and removes the runs; the job is gone afterwards', async () => {
    const created = await put({ name: 'doomed', cadence: '@every 1s', callback_url: `${receiver.url}/doomed` });
    await receiver.waitFor(() => receiver.on('/doomed').length >= 1, 5_000, 'a first fire');
    const deleted = await t.scheduler('job/delete', { agent_id: 'alice', name: 'doomed' }, 'alice');
    expect(deleted.body).toEqual({ name: 'doomed', status: 'deleted' });
    const count = receiver.on('/doomed').length;
    await sleep(1_500);
    expect(receiver.on('/doomed').length).toBeLessThanOrEqual(count + 1);
    const left = await db.knex('core_jobs').where('dedupe_key', 'like', `scheduler:${created.body.job_id}:%`).whereIn('status', ['queued']);
    expect(left).toHaveLength(0);
    expect(await db.knex('scheduler_runs').where({ job_id: created.body.job_id })).toHaveLength(0);
    for (const path of ['runs/list', 'job/pause', 'job/resume', 'job/delete']) {
      const response = await t.scheduler(path, { agent_id: 'alice', name: 'doomed' }, 'alice');
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });

  it('refuses bad input with 400 and the reason, and changes nothing', async () => {
    const refused: Array<[Record<string, unknown>, RegExp, string]> = [
      [{ cadence: '61 * * * *' }, /Invalid cadence: the minute field "61" is not valid: use 0–59/, 'cadence'],
      [{ cadence: '* * * *' }, /Invalid cadence: a cron expression has 5 fields/, 'cadence'],
      [{ cadence: '@every 500ms' }, /Invalid cadence: "@every 500ms" is not <n><unit>/, 'cadence'],
      [{ cadence: '@every 90x' }, /is not <n><unit>/, 'cadence'],
      [{ cadence: '0 9 * * *', timezone: 'Atlantis/Capital' }, /Unknown time zone/, 'timezone'],
      [{ cadence: 'CRON_TZ=Atlantis/Capital 0 9 * * *' }, /Unknown time zone/, 'cadence'],
      [{ callback_url: 'ftp://example.com/x' }, /scheme must be https or http, not ftp\./, 'callback_url'],
      [{ callback_url: 'not a url' }, /not a valid absolute URL/, 'callback_url'],
    ];
    for (const [body, reason, path] of refused) {
      const response = await put({ name: 'bad', cadence: '@every 1h', ...body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(reason) });
      expect(response.body.error.details.fields[0].path, JSON.stringify(body)).toBe(path);
    }
    for (const body of [
      { max_attempts: 0 },
      { max_attempts: 21 },
      { max_attempts: 2.5 },
      { catch_up: 'twice' },
      { secret: 'whsec_***not base64***' },
      { name: '' },
      { name: '-leading-dash' },
      { unknown_field: 1 },
      { cadence: 42 },
    ]) {
      const response = await put({ name: 'bad', cadence: '@every 1h', ...body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect(response.body.error.details.fields.length).toBeGreaterThan(0);
    }
    const emptySecret = await put({ name: 'bad', cadence: '@every 1h', secret: '' });
    expect(emptySecret.status).toBe(400);
    expect(emptySecret.body.error.details.fields).toEqual([
      { path: 'secret', message: 'A secret without the whsec_ prefix must be 16–512 characters.' },
    ]);
    const limits = [0, 501, 1.5];
    for (const limit of limits) {
      expect((await t.scheduler('runs/list', { agent_id: 'alice', name: 'x', limit }, 'alice')).status).toBe(400);
    }
    expect((await t.scheduler('runs/list', { agent_id: 'alice', name: 'bad' }, 'alice')).status).toBe(404);
    expect(await db.knex('scheduler_jobs').where({ name: 'bad' })).toHaveLength(0);
  });

  it('authenticates (401), keeps agents apart (403, 404) and 404s unknown runs', async () => {
    const body = {
      agent_id: 'alice',
      name: 'private',
      cadence: '@every 1h',
      callback_url: `${receiver.url}/ok`,
      secret: newWebhookSecret(),
    };
    expect((await t.scheduler('job/put', body, {})).status).toBe(401);
    expect((await t.scheduler('job/put', body, { credential: 'dk_unknown' })).status).toBe(401);
    const forbidden = await t.scheduler('job/put', body, 'bob');
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe('forbidden');
    expect((await t.scheduler('job/put', body, { credential: t.server.bridgeKey })).status).toBe(200);
    expect((await t.scheduler('runs/list', { agent_id: 'alice', name: 'private' }, 'bob')).status).toBe(403);
    expect((await t.scheduler('runs/list', { agent_id: 'bob', name: 'private' }, 'bob')).status).toBe(404);
    const unknownRun = await t.scheduler('runs/retry', { agent_id: 'alice', run_id: 'run_nope' }, 'alice');
    expect(unknownRun.status).toBe(404);
    expect(unknownRun.body.error.code).toBe('not_found');
    const alicesRun = (await db.knex('scheduler_runs').where({ agent_id: 'alice' }).first()) as { id: string };
    expect((await t.scheduler('runs/retry', { agent_id: 'bob', run_id: alicesRun.id }, 'bob')).status).toBe(404);
    expect((await t.scheduler('runs/retry', { agent_id: 'alice', run_id: alicesRun.id }, 'bob')).status).toBe(403);
    const wrongMethod = await t.server.call('agent-scheduler/job/put', undefined, { method: 'GET' });
    expect(wrongMethod.status).toBe(405);
  });

  it('never returns or stores the secret in plain text', async () => {
    const secret = newWebhookSecret();
    const response = await put({ name: 'sealed', cadence: '@every 1h', secret });
    expect(JSON.stringify(response.body)).not.toContain(secret);
    const row = (await db.knex('scheduler_jobs').where({ id: response.body.job_id }).first()) as Record<string, unknown>;
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain(secret.slice(6));
    expect(typeof row.secret_sealed).toBe('string');
    expect((row.secret_sealed as string).length).toBeGreaterThan(secret.length);
  });

  it("refuses a new job past the agent's quota with 409, and still replaces or deletes its jobs", async () => {
    const bridge = { credential: t.server.bridgeKey };
    const setQuota = (value: number) =>
      t.server.call('agent-identity/settings/set', { key: 'scheduler_max_jobs_per_agent', value }, bridge);
    const held = Number(((await db.knex('scheduler_jobs').where({ agent_id: 'bob' }).count({ n: '*' }).first()) as { n: number }).n);
    expect((await setQuota(held + 1)).status).toBe(200);
    try {
      const job = (name: string) => put({ name, cadence: '@every 1h' }, 'bob');
      expect((await job('quota-one')).status).toBe(200);
      const over = await job('quota-two');
      expect(over.status).toBe(409);
      expect(over.body.error).toMatchObject({
        message: expect.stringContaining('scheduler_max_jobs_per_agent'),
        details: { quota: held + 1, used: held + 1 },
      });
      expect((await job('quota-one')).status).toBe(200);
      expect((await t.scheduler('job/delete', { agent_id: 'bob', name: 'quota-one' }, 'bob')).status).toBe(200);
      expect((await job('quota-two')).status).toBe(200);
    } finally {
      expect((await setQuota(1_000)).status).toBe(200);
    }
  });
});
