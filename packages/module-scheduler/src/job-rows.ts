import { isoTimestamp } from '@agentinfra/core';
import type { Cadence } from './cadence.js';
import type { CatchUp, RunStatus, RunView } from './schemas.js';

/** Table of jobs. */
export const JOBS = 'scheduler_jobs';
/** Table of runs. */
export const RUNS = 'scheduler_runs';

/** A stored job. `next_run_at` is the one instant whose fire is queued (null while paused). */
export interface JobRow {
  id: string;
  agent_id: string;
  name: string;
  /** The cadence as the caller wrote it. */
  cadence: string;
  /** Normalised cron expression (cron cadences), else null. */
  cron: string | null;
  /** Interval in ms (`@every` cadences), else null. */
  interval_ms: number | null;
  timezone: string;
  callback_url: string;
  secret_sealed: string;
  /** The secret `secret_sealed` replaced (sealed with the same context), or null; it still signs during the grace window. */
  previous_secret_sealed: string | null;
  /** When the secret was last replaced (ms), or null; starts the grace window of `previous_secret_sealed`. */
  secret_rotated_at: number | null;
  max_attempts: number;
  catch_up: CatchUp;
  status: 'active' | 'paused';
  /** Origin of `@every` instants: the time the cadence was set, or the job last resumed. */
  anchor_at: number;
  next_run_at: number | null;
  /** Queue job that fires `next_run_at`. */
  next_fire_queue_id: string | null;
  /** Generation of the fire chain: bumped when the chain is restarted; fires of older epochs are stale. */
  fire_epoch: number;
  created_at: number;
  updated_at: number;
}

/** A stored run: one scheduled instant of a job, with the attempts of its current series. */
export interface RunRow {
  id: string;
  job_id: string;
  agent_id: string;
  scheduled_for: number;
  status: RunStatus;
  attempts: number;
  max_attempts: number;
  /** 0 for the scheduled fire, n for the n-th /runs/retry. */
  series: number;
  error: string | null;
  /** Queue job executing the current series. */
  queue_id: string | null;
  started_at: number | null;
  finished_at: number | null;
  created_at: number;
  updated_at: number;
}

/** The cadence stored on a job row. */
export function cadenceOf(job: Pick<JobRow, 'cron' | 'interval_ms' | 'timezone'>): Cadence {
  if (job.interval_ms !== null) return { kind: 'every', intervalMs: Number(job.interval_ms) };
  return { kind: 'cron', expression: job.cron ?? '', timezone: job.timezone };
}

/** The columns of a job row that hold its cadence. */
export function cadenceColumns(cadence: Cadence): Pick<JobRow, 'cron' | 'interval_ms' | 'timezone'> {
  return cadence.kind === 'every'
    ? { cron: null, interval_ms: cadence.intervalMs, timezone: 'UTC' }
    : { cron: cadence.expression, interval_ms: null, timezone: cadence.timezone };
}

/** A run as /runs/list shows it. */
export function runView(run: RunRow): RunView {
  return {
    id: run.id,
    scheduled_for: isoTimestamp(run.scheduled_for),
    status: run.status,
    attempts: run.attempts,
    error: run.error,
    started_at: run.started_at === null ? null : isoTimestamp(run.started_at),
    finished_at: run.finished_at === null ? null : isoTimestamp(run.finished_at),
  };
}

/** SecretBox context of a job's signing secret (a sealed secret moved to another job fails to open). */
export function secretContext(jobId: string): string {
  return `scheduler-job:${jobId}`;
}
