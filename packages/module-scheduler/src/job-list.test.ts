import { newWebhookSecret } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

describe.each(sqlDatabases())('/job/list on $name', ({ create }) => {
  let t: SchedulerTestServer;
  let cleanup: () => Promise<void>;
  const secret = newWebhookSecret();
  /** A receiver that authenticates callbacks by a token in the query string too. */
  const callbackUrl = 'http://127.0.0.1:9/hook?token=tk_receiver_only';

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startSchedulerTestServer({ db: fixture.db });
    // Hourly jobs at a closed port: nothing fires during the test.
    const put = (agent: 'alice' | 'bob', name: string) =>
      t.scheduler('job/put', { agent_id: agent, name, cadence: '@every 1h', callback_url: callbackUrl, secret, max_attempts: 3 }, agent);
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
      callback_url: callbackUrl,
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

  it("shows a delegation without scheduler.write each callback_url's origin and path only", async () => {
    const delegate = async (scope: string[]) => {
      const response = await t.server.call(
        'agent-identity/delegate',
        { from_agent: 'alice', to_agent: 'bob', scope, expires_at: new Date(Date.now() + 86_400_000).toISOString() },
        { credential: t.keys.alice },
      );
      expect(response.status).toBe(200);
      return { credential: response.body.token as string };
    };
    const urlsSeenBy = async (as: 'alice' | { credential: string }) => {
      const response = await t.scheduler('job/list', { agent_id: 'alice' }, as);
      expect(response.status).toBe(200);
      return response.body.jobs.map((job: { callback_url: string }) => job.callback_url);
    };

    const reader = await delegate(['scheduler.read']);
    expect(await urlsSeenBy(reader)).toEqual(['http://127.0.0.1:9/hook', 'http://127.0.0.1:9/hook', 'http://127.0.0.1:9/hook']);
    const readerPage = await t.scheduler('job/list', { agent_id: 'alice' }, reader);
    expect(JSON.stringify(readerPage.body)).not.toContain('tk_receiver_only');
    expect(readerPage.body.jobs[0]).toMatchObject({ name: 'daily', cadence: '@every 1h', max_attempts: 3, status: 'active' });

    const whole = [callbackUrl, callbackUrl, callbackUrl];
    expect(await urlsSeenBy(await delegate(['scheduler.read', 'scheduler.write']))).toEqual(whole);
    expect(await urlsSeenBy('alice')).toEqual(whole);
    expect(await urlsSeenBy({ credential: t.server.bridgeKey })).toEqual(whole);
    // A writer-only delegation cannot list at all.
    expect((await t.scheduler('job/list', { agent_id: 'alice' }, await delegate(['scheduler.write']))).status).toBe(403);
  });
});
