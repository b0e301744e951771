import { lockedWhen } from '@agentinfra/core';
import type { Knex } from 'knex';
import { scheduleNextFire } from './fire-chain.js';
import { JOBS, type JobRow, RUNS, type RunRow } from './job-rows.js';
import type { SchedulerDeps } from './service-deps.js';

/** How long past due a fire, or how long unchanged a pending run, must be before reconcile looks at it. */
export const STALE_AFTER_MS = 5 * 60_000;
/** Jobs and runs examined per reconcile pass. */
const BATCH = 200;
/** Error recorded on a run whose queue job ended without finishing it. */
export const INTERRUPTED_ERROR = 'The attempt was interrupted: the process running it stopped.';

/** What one reconcile pass repaired. */
export interface ReconcileResult {
  /** Jobs whose fire chain was broken and was queued again after now. */
  chainsRepaired: number;
  /** Runs left queued/running by a queue job that ended, now marked failed. */
  runsFailed: number;
}

/**
 * Safety net for the rare crash windows the queue cannot close by itself
 * (the last queue attempt of a run lost with its process): an active job
 * whose next fire is long past due and whose queue job is no longer queued
 * or running gets its next instant after now queued; a run left `queued` or
 * `running` whose queue job ended is marked `failed`. Healthy backlogs are
 * never touched: their queue jobs are still queued or running.
 */
export async function reconcileScheduler(deps: SchedulerDeps, now: number): Promise<ReconcileResult> {
  const knex = deps.sql.knex;
  const lock = deps.sql.capabilities.multiProcess;
  const ended = async (queueId: string | null) => {
    if (queueId === null) return true;
    const record = await deps.jobs.get({ id: queueId });
    return record === null || (record.status !== 'queued' && record.status !== 'running');
  };

  let chainsRepaired = 0;
  const stale = (await knex(JOBS)
    .where({ status: 'active' })
    .where('next_run_at', '<', now - STALE_AFTER_MS)
    .orderBy('next_run_at')
    .limit(BATCH)) as JobRow[];
  for (const job of stale) {
    if (!(await ended(job.next_fire_queue_id))) continue;
    const repaired = await knex.transaction(async (trx: Knex.Transaction) => {
      const current = (await lockedWhen(trx(JOBS).where({ id: job.id }), lock).first()) as JobRow | undefined;
      if (current?.status !== 'active' || Number(current.next_run_at) !== Number(job.next_run_at)) return false;
      await scheduleNextFire({ trx, jobs: deps.jobs, job: current, after: now, now, restart: true });
      return true;
    });
    if (repaired) {
      chainsRepaired += 1;
      deps.logger.warn({ job_id: job.id }, 'fire chain was broken; next fire queued again');
    }
  }

  let runsFailed = 0;
  const pending = (await knex(RUNS)
    .whereIn('status', ['queued', 'running'])
    .where('updated_at', '<', now - STALE_AFTER_MS)
    .orderBy('updated_at')
    .limit(BATCH)) as RunRow[];
  for (const run of pending) {
    if (!(await ended(run.queue_id))) continue;
    const updated = await knex(RUNS)
      .where({ id: run.id, series: run.series, status: run.status, updated_at: run.updated_at })
      .update({ status: 'failed', error: INTERRUPTED_ERROR, finished_at: now, updated_at: now });
    runsFailed += updated;
  }
  return { chainsRepaired, runsFailed };
}
