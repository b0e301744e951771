import type { JobQueue } from '@agentinfra/core';
import type { Knex } from 'knex';
import { nextFire } from './cadence.js';
import { cadenceOf, JOBS, type JobRow } from './job-rows.js';
import { fireKey, QUEUE_MAX_ATTEMPTS, RUN_QUEUE_JOB, runGroupOf } from './queue-keys.js';
import type { RunPayload } from './schemas.js';

/**
 * Queues the fire of `job`'s first instant strictly after `after` and records
 * it as the job's `next_run_at`, inside `trx` (which must hold the job row).
 * `restart` begins a new chain (bumps `fire_epoch`: put with a new cadence,
 * resume, repair); otherwise the chain continues in the job's epoch. The
 * queue job's dedupe key is (job id, epoch, instant), so however many
 * replicas advance a chain at once, each instant is queued once. The fire
 * is queued in the agent's fairness group ({@link runGroupOf}).
 * @returns the instant (ms) and the queue job id, or `null` when a cron
 *   expression has no later occurrence (the job then has no next run).
 */
export async function scheduleNextFire(options: {
  trx: Knex.Transaction;
  jobs: JobQueue;
  job: Pick<JobRow, 'id' | 'agent_id' | 'cron' | 'interval_ms' | 'timezone' | 'anchor_at' | 'fire_epoch'>;
  after: number;
  now: number;
  restart: boolean;
}): Promise<{ at: number; queueId: string } | null> {
  const { trx, job } = options;
  const epoch = Number(job.fire_epoch) + (options.restart ? 1 : 0);
  const at = nextFire(cadenceOf(job), { after: options.after, anchor: Number(job.anchor_at) });
  if (at === null) {
    await trx(JOBS)
      .where({ id: job.id })
      .update({ next_run_at: null, next_fire_queue_id: null, fire_epoch: epoch, updated_at: options.now });
    return null;
  }
  const payload: RunPayload = { kind: 'fire', job_id: job.id, epoch, scheduled_for: at };
  const { id } = await options.jobs.enqueue({
    name: RUN_QUEUE_JOB,
    payload,
    runAt: at,
    dedupeKey: fireKey(job.id, epoch, at),
    maxAttempts: QUEUE_MAX_ATTEMPTS,
    group: runGroupOf(job.agent_id),
    trx,
  });
  await trx(JOBS).where({ id: job.id }).update({ next_run_at: at, next_fire_queue_id: id, fire_epoch: epoch, updated_at: options.now });
  return { at, queueId: id };
}
