import { isoTimestamp, JobInterruptedError, JobLeaseLostError, lockedWhen, newId } from '@agentinfra/core';
import type { Knex } from 'knex';
import type { SchedulerConfig } from './config.js';
import { scheduleNextFire } from './fire-chain.js';
import { JOBS, type JobRow, RUNS, type RunRow } from './job-rows.js';
import { createSchedulerMetrics } from './scheduler-metrics.js';
import type { RunPayload } from './schemas.js';
import { signingSecrets } from './secret-rotation.js';
import type { SchedulerDeps } from './service-deps.js';

/** A run about to be attempted, with the job it belongs to. */
interface Attemptable {
  run: RunRow;
  job: JobRow;
  /** The run was created already marked `running` for its first attempt (saves a write per fire). */
  marked: boolean;
}

/** The error of a run whose last attempt ended without an outcome, found when the queue ran the run again. */
export const LAST_ATTEMPT_LOST = 'The last attempt ended without an outcome (its process stopped or it timed out); no attempts left.';

/** Type of the callback body (CONTRACT.md "Signed deliveries"). */
export const JOB_RUN_EVENT = 'job.run';

/** `webhook-id` of a run's deliveries: stable across the attempts of a series, new for each /runs/retry. */
export function messageIdOf(run: Pick<RunRow, 'id' | 'series'>): string {
  return run.series === 0 ? run.id : `${run.id}_${run.series}`;
}

function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

/**
 * Executes queued runs: turns a fire into a run (advancing the job's fire
 * chain in the same transaction), makes one signed callback attempt, and
 * records the outcome. A failed attempt below the run's `max_attempts` is
 * re-thrown so the core job runner retries it with exponential back-off
 * and jitter; the last failed attempt marks the run `failed`.
 */
export function createCallbackRunner(deps: SchedulerDeps, config: SchedulerConfig) {
  const knex = () => deps.sql.knex;
  const lock = deps.sql.capabilities.multiProcess;
  const metrics = createSchedulerMetrics(deps.metrics);

  /**
   * The run of `jobId` at `instant`, created on the first claim (already
   * `running`, attempt 1). Creating it and queueing the next instant happen
   * in one transaction that holds the job row, and only while the job still
   * expects this instant (`next_run_at` in the same chain epoch), so an
   * instant becomes a run at most once even when several replicas or a
   * crashed attempt's retry claim it. A fire missed by more than
   * `missedAfterMs` is dropped when the job's `catch_up` is `skip`; either
   * way the chain continues after now, so a downtime yields at most one
   * catch-up run.
   */
  async function claimFire(jobId: string, epoch: number, instant: number): Promise<Attemptable | null> {
    return knex().transaction(async (trx: Knex.Transaction) => {
      const job = (await lockedWhen(trx(JOBS).where({ id: jobId }), lock).first()) as JobRow | undefined;
      const existing = (await trx(RUNS).where({ job_id: jobId, scheduled_for: instant }).first()) as RunRow | undefined;
      if (existing) return job && existing.series === 0 && isPending(existing) ? { run: existing, job, marked: false } : null;
      if (job?.status !== 'active' || Number(job.fire_epoch) !== epoch || Number(job.next_run_at) !== instant) return null;
      const now = deps.clock.now();
      const firingQueueId = job.next_fire_queue_id;
      await scheduleNextFire({ trx, jobs: deps.jobs, job, after: Math.max(now, instant), now, restart: false });
      if (now - instant > config.missedAfterMs && job.catch_up === 'skip') {
        deps.logger.info({ job_id: jobId, scheduled_for: isoTimestamp(instant), late_ms: now - instant }, 'missed fire skipped');
        return null;
      }
      const run: RunRow = {
        id: newId('run_'),
        job_id: jobId,
        agent_id: job.agent_id,
        scheduled_for: instant,
        status: 'running',
        attempts: 1,
        max_attempts: job.max_attempts,
        series: 0,
        error: null,
        queue_id: firingQueueId,
        started_at: now,
        finished_at: null,
        created_at: now,
        updated_at: now,
      };
      await trx(RUNS).insert(run);
      return { run, job, marked: true };
    });
  }

  async function loadRetry(runId: string, series: number): Promise<Attemptable | null> {
    const run = (await knex()(RUNS).where({ id: runId }).first()) as RunRow | undefined;
    if (!run || run.series !== series || !isPending(run)) return null;
    const job = (await knex()(JOBS).where({ id: run.job_id }).first()) as JobRow | undefined;
    return job ? { run, job, marked: false } : null;
  }

  /**
   * One callback attempt of `run`.
   * @throws Error (to be retried) when it failed and attempts remain; the signal's
   *   JobInterruptedError when a shutdown ended it (the attempt is not counted).
   */
  async function attempt({ run, job, marked }: Attemptable, signal: AbortSignal): Promise<void> {
    const startedAt = deps.clock.now();
    const attemptNo = marked ? run.attempts : run.attempts + 1;
    if (attemptNo > run.max_attempts) {
      // The last attempt ended without an outcome (its process stopped, or it outlived the queue job's timeout) and
      // the queue runs the job again: the run's own attempts are spent, so it fails instead of calling once more.
      await knex()(RUNS)
        .where({ id: run.id, series: run.series })
        .whereIn('status', ['queued', 'running'])
        .update({ status: 'failed', error: LAST_ATTEMPT_LOST, finished_at: startedAt, updated_at: startedAt });
      metrics.attempts.inc({ outcome: 'failed' });
      return;
    }
    if (!marked) {
      const updated = await knex()(RUNS)
        .where({ id: run.id, series: run.series })
        .whereIn('status', ['queued', 'running'])
        .update({ status: 'running', attempts: attemptNo, started_at: run.started_at ?? startedAt, updated_at: startedAt });
      if (updated === 0) return;
    }
    const log = deps.logger.child({ job_id: job.id, run_id: run.id, attempt: attemptNo });
    let failure: string | null = null;
    try {
      const secrets = signingSecrets({ secretBox: deps.secretBox, job, now: startedAt, graceMs: config.secretRotationGraceMs });
      const result = await deps.delivery.send({
        url: job.callback_url,
        secrets,
        messageId: messageIdOf(run),
        type: JOB_RUN_EVENT,
        data: {
          job: { job_id: job.id, agent_id: job.agent_id, name: job.name },
          run_id: run.id,
          scheduled_for: isoTimestamp(Number(run.scheduled_for)),
          attempt: attemptNo,
        },
        timeoutMs: config.callbackTimeoutMs,
        signal,
      });
      if (!result.ok) failure = `HTTP ${result.status}`;
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    const finishedAt = deps.clock.now();
    const current = knex()(RUNS).where({ id: run.id, series: run.series, status: 'running' });
    if (failure === null) {
      await current.update({ status: 'succeeded', error: null, finished_at: finishedAt, updated_at: finishedAt });
      metrics.attempts.inc({ outcome: 'succeeded' });
      log.debug({ ms: finishedAt - startedAt }, 'callback succeeded');
      return;
    }
    if (signal.reason instanceof JobLeaseLostError) {
      // Another worker holds the run's queue job now and records the outcome: this attempt writes nothing.
      log.warn('callback attempt stopped: its queue job lease went to another worker');
      throw signal.reason;
    }
    if (signal.reason instanceof JobInterruptedError) {
      // The shutdown, not the receiver, ended this attempt: it does not count, and the queue hands the run to another process.
      await current.update({ status: 'queued', attempts: attemptNo - 1, updated_at: finishedAt });
      log.info('callback interrupted by the shutdown; the run goes back to the queue');
      throw signal.reason;
    }
    const error = truncate(failure, config.maxErrorLength);
    const final = attemptNo >= run.max_attempts;
    await current.update({ status: final ? 'failed' : 'queued', error, finished_at: final ? finishedAt : null, updated_at: finishedAt });
    metrics.attempts.inc({ outcome: final ? 'failed' : 'retrying' });
    if (final) {
      log.warn({ error }, 'run failed after its last attempt');
      return;
    }
    throw new Error(error);
  }

  return {
    /**
     * Executes one `scheduler.run` queue job: a fire (`kind: "fire"`) or a
     * retry series (`kind: "retry"`). Stale payloads (deleted or paused job,
     * superseded instant, finished run) are dropped quietly.
     * @throws Error after a failed attempt that has attempts left (the job runner retries it).
     */
    async execute(payload: RunPayload, signal: AbortSignal): Promise<void> {
      const target =
        payload.kind === 'fire'
          ? await claimFire(payload.job_id, payload.epoch, payload.scheduled_for)
          : await loadRetry(payload.run_id, payload.series);
      if (payload.kind === 'fire' && target?.marked) metrics.fires.inc();
      if (target) await attempt(target, signal);
    },
  };
}

function isPending(run: RunRow): boolean {
  return run.status === 'queued' || run.status === 'running';
}
