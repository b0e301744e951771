import { newWebhookSecret } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

describe.each(sqlDatabases())('/job/list on $name', ({ create }) => {
  let t: SchedulerTestServer;
  let cleanup: () => Promise<void>;
  const secret = newWebhookSecret();

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startSchedulerTestServer({ db: fixture.db });
    // Hourly jobs at a closed port: nothing fires during the test.
    const put = (agent: 'alice' | 'bob', name: string) =>
      t.scheduler(
        'job/put',
        { agent_id: agent, name, cadence: '@every 1h', callback_url: 'http://127.0.0.1:9/hook', secret, max_attempts: 3 },
        agent,
      );
    for (const name of ['weekly', 'daily', 'hourly']) expect((await put('alice', name)).status).toBe(200);
    expect((await put('bob', 'bobs')).status).toBe(200);
    expect((await t.scheduler('job/pause', { agent_id: 'alice', name: 'weekly' }, 'alice')).status).toBe(200);
  });
  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it("lists only the agent's own jobs, in name order, a page at a time, without the secret", async () => {
    const first = await t.scheduler('job/list', { agent_id: 'alice', limit: 2 }, 'alice');
    expect(first.status).toBe(200);
    expect(first.body.jobs.map((job: { name: string }) => job.name)).toEqual(['daily', 'hourly']);
    expect(first.body.jobs[0]).toMatchObject({
      agent_id: 'alice',
      cadence: '@every 1h',
      callback_url: 'http://127.0.0.1:9/hook',
      max_attempts: 3,
      status: 'active',
      last_run: null,
    });
    expect(JSON.stringify(first.body)).not.toContain(secret.slice(6));
    const second = await t.scheduler('job/list', { agent_id: 'alice', limit: 2, cursor: first.body.next_cursor }, 'alice');
    expect(second.body.jobs.map((job: { name: string; status: string }) => [job.name, job.status])).toEqual([['weekly', 'paused']]);
    expect(second.body.next_cursor).toBeNull();
    const paused = await t.scheduler('job/list', { agent_id: 'alice', status: 'paused' }, 'alice');
    expect(paused.body.jobs.map((job: { name: string }) => job.name)).toEqual(['weekly']);
  });

  it("refuses another agent's jobs (403) and a forged cursor (400)", async () => {
    expect((await t.scheduler('job/list', { agent_id: 'alice' }, 'bob')).status).toBe(403);
    const bobs = await t.scheduler('job/list', { agent_id: 'bob' }, 'bob');
    expect(bobs.body.jobs.map((job: { name: string }) => job.name)).toEqual(['bobs']);
    const forged = await t.scheduler('job/list', { agent_id: 'alice', cursor: 'c1.bm9wZQ' }, 'alice');
    expect(forged.status).toBe(400);
    expect(forged.body.error.code).toBe('invalid_request');
  });
});
