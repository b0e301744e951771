import { type JobDefinition, JobInterruptedError, JobLeaseLostError, JobRunner, migrateLatest } from '@agentinfra/core';
import { coreMigrations, createCapturedLogger } from '@agentinfra/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { sqlDatabases } from './sql-databases.js';

/** Lease on the test's clock, ms: long enough that no renewal (every third of it, in real time) runs during a test. */
const LEASE_MS = 30_000;

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A promise the test settles: `open()` resolves `opened`. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/**
 * Attempt fencing of the durable job runner: when a runner's lease on a job
 * expires and the same runner claims the job again, only the later attempt
 * may renew the lease or record an outcome (the stale attempt has the same
 * `locked_by`, so only its attempt number tells it apart).
 */
describe.each(sqlDatabases())('job runner attempt fencing on $name', ({ create }) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * A runner with lease `leaseMs` on a fresh database and a clock the test moves (`advance`), running
   * `test.reclaimed`, whose attempt `n` runs `attempts[n - 1]`; the job is enqueued and its attempt 1 started.
   */
  async function started(attempts: Array<JobDefinition['run']>, leaseMs: number) {
    const fixture = await create();
    cleanups.push(fixture.cleanup);
    const sql = fixture.db;
    await migrateLatest({ knex: sql.knex, table: 'core_migrations', migrations: coreMigrations });
    let now = Date.now();
    const { logger, lines } = createCapturedLogger('debug');
    const jobs = new JobRunner({
      sql,
      clock: { now: () => now },
      logger,
      pollIntervalMs: 20,
      concurrency: 2,
      groupConcurrency: 2,
      retryBaseMs: 10,
      retryMaxMs: 50,
      leaseMs,
    });
    cleanups.push(() => jobs.stop(1_000));
    const runs: number[] = [];
    jobs.register(
      {
        name: 'test.reclaimed',
        maxAttempts: 3,
        run: (ctx) => {
          runs.push(ctx.attempt);
          return attempts[ctx.attempt - 1]!(ctx);
        },
      },
      null,
    );
    jobs.start();
    const { id } = await jobs.enqueue({ name: 'test.reclaimed' });
    await until(() => runs.length === 1);
    return {
      sql,
      jobs,
      id,
      runs,
      now: () => now,
      advance: (ms: number) => {
        now += ms;
      },
      /** Resolves once the runner logged `message` for `attempt` (after its outcome write, whether it matched or not). */
      logged: (attempt: number, message: string) => until(() => lines.some((line) => line.attempt === attempt && line.msg === message)),
      row: () => sql.knex('core_jobs').where({ id }).first(),
    };
  }

  /** {@link started}, then attempt 1 outlives its lease (as if the event loop stalled) and the same runner claims attempt 2. */
  async function reclaimed(attempts: Array<JobDefinition['run']>) {
    const job = await started(attempts, LEASE_MS);
    job.advance(LEASE_MS + 1);
    await until(() => job.runs.length === 2);
    return job;
  }

  it('records nothing for the stale attempt that succeeds late: the row keeps the reclaiming attempt’s outcome', async () => {
    const late = gate();
    const second = gate();
    cleanups.push(async () => {
      late.open();
      second.open();
    });
    const { jobs, id, logged } = await reclaimed([
      () => late.opened,
      async () => {
        await second.opened;
        throw new Error('attempt 2 failed');
      },
    ]);
    late.open();
    await logged(1, 'job succeeded');
    second.open();
    await logged(2, 'job attempt failed; retrying');
    expect(await jobs.get({ id })).toMatchObject({ status: 'queued', attempts: 2, lastError: 'attempt 2 failed' });
  });

  it('does not requeue the job for the stale attempt that fails late while the reclaiming attempt runs', async () => {
    const late = gate();
    const second = gate();
    cleanups.push(async () => {
      late.open();
      second.open();
    });
    const { jobs, id, runs, logged, row } = await reclaimed([
      async () => {
        await late.opened;
        throw new Error('attempt 1 failed');
      },
      () => second.opened,
    ]);
    late.open();
    await logged(1, 'job attempt failed; retrying');
    expect(await row()).toMatchObject({ status: 'running', attempts: 2, last_error: null });
    second.open();
    await logged(2, 'job succeeded');
    expect(await jobs.get({ id })).toMatchObject({ status: 'succeeded', attempts: 2, lastError: null });
    expect(runs).toEqual([1, 2]);
  });

  it('stops the stale attempt at its next renewal, which leaves the lease of the reclaiming attempt as it is', async () => {
    let reason: unknown;
    const stale: JobDefinition['run'] = ({ signal }) =>
      new Promise<void>((_, reject) =>
        signal.addEventListener('abort', () => {
          reason = signal.reason;
          reject(signal.reason);
        }),
      );
    // A short lease, renewed every 100 ms in real time: here the test writes the reclaim itself, as this runner's
    // claim of attempt 2 leaves the row, so that no renewal of attempt 1 can come between an expiry and that claim.
    const { sql, id, now, row } = await started([stale], 300);
    const reclaim = { locked_by: (await row()).locked_by, locked_until: now() + 60_000, attempts: 2 };
    await sql.knex('core_jobs').where({ id }).update(reclaim);
    await until(() => reason !== undefined);
    expect(reason).toBeInstanceOf(JobLeaseLostError);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await row()).toMatchObject({ status: 'running', ...reclaim });
  });

  it('waits at a stop for the reclaiming attempt after the stale one ended, and interrupts it', async () => {
    let reason: unknown;
    const late = gate();
    cleanups.push(async () => late.open());
    const { jobs, logged, row } = await reclaimed([
      () => late.opened,
      ({ signal }) =>
        new Promise<void>((_, reject) =>
          signal.addEventListener('abort', () => {
            reason = signal.reason;
            reject(signal.reason);
          }),
        ),
    ]);
    late.open();
    await logged(1, 'job succeeded');
    await jobs.stop(50);
    expect(reason).toBeInstanceOf(JobInterruptedError);
    expect(await row()).toMatchObject({ status: 'queued', attempts: 1 });
  });
});
