import { type Clock, newWebhookSecret } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulerTestServer, startSchedulerTestServer } from './test-support/scheduler-test-server.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A clock that stands still until the test sets it. */
function manualClock(start: number): Clock & { at: number } {
  const clock = { at: start, now: () => clock.at };
  return clock;
}

describe.each(sqlDatabases())('/job/resume schedules like /job/put on a paused job, on $name', ({ create }) => {
  let t: SchedulerTestServer;
  let cleanup: () => Promise<void>;
  // Not on a whole hour, so that the @every anchor and the cron hours differ.
  const clock = manualClock(Math.floor(Date.now() / HOUR) * HOUR + 7 * MINUTE + 13_000);
  const secret = newWebhookSecret();

  const put = async (name: string, cadence: string) => {
    const response = await t.scheduler(
      'job/put',
      { agent_id: 'alice', name, cadence, callback_url: 'http://127.0.0.1:9/hook', secret },
      'alice',
    );
    expect(response.status).toBe(200);
    return Date.parse(response.body.next_run_at);
  };
  const pause = async (name: string) => {
    expect((await t.scheduler('job/pause', { agent_id: 'alice', name }, 'alice')).status).toBe(200);
  };
  const resume = async (name: string) => {
    const response = await t.scheduler('job/resume', { agent_id: 'alice', name }, 'alice');
    expect(response.status).toBe(200);
    return Date.parse(response.body.next_run_at);
  };
  const listed = async () => {
    const response = await t.scheduler('job/list', { agent_id: 'alice' }, 'alice');
    return new Map<string, number>(
      response.body.jobs.map((job: { name: string; next_run_at: string }) => [job.name, Date.parse(job.next_run_at)]),
    );
  };

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    // No job runner: the test reads the schedule, nothing fires.
    t = await startSchedulerTestServer({ db: fixture.db, clock, jobs: { enabled: false } });
  });
  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it('after a long pause an @every job next fires one interval after the resume, as after a put of the same cadence', async () => {
    const putAt = clock.at;
    for (const name of ['every-resumed', 'every-put']) expect(await put(name, '@every 1h')).toBe(putAt + HOUR);
    clock.at = putAt + 10 * MINUTE;
    for (const name of ['every-resumed', 'every-put']) await pause(name);

    // Three days and 25 minutes later: the put-time anchor would give putAt + 74 h, 35 minutes from now.
    clock.at = putAt + 3 * 24 * HOUR + 25 * MINUTE;
    const resumedAt = clock.at;
    expect(await resume('every-resumed')).toBe(resumedAt + HOUR);
    expect(await put('every-put', '@every 1h')).toBe(resumedAt + HOUR);

    // The new anchor holds: resuming again is a no-op, and a put of the same cadence keeps the schedule.
    clock.at = resumedAt + 20 * MINUTE;
    expect(await resume('every-resumed')).toBe(resumedAt + HOUR);
    expect(await put('every-resumed', '@every 1h')).toBe(resumedAt + HOUR);
    const jobs = await listed();
    expect(jobs.get('every-resumed')).toBe(resumedAt + HOUR);
    expect(jobs.get('every-put')).toBe(resumedAt + HOUR);
  });

  it('a cron job resumes at its next occurrence after now, whichever way it is resumed', async () => {
    const putAt = clock.at;
    const nextHourAfter = (at: number) => Math.floor(at / HOUR) * HOUR + HOUR;
    for (const name of ['cron-resumed', 'cron-put']) expect(await put(name, '0 * * * *')).toBe(nextHourAfter(putAt));
    for (const name of ['cron-resumed', 'cron-put']) await pause(name);

    clock.at = putAt + 2 * 24 * HOUR + 50 * MINUTE;
    expect(await resume('cron-resumed')).toBe(nextHourAfter(clock.at));
    expect(await put('cron-put', '0 * * * *')).toBe(nextHourAfter(clock.at));
  });
});
