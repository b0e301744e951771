/** Queue job kind that fires a job's instant or retries a run (one callback attempt per execution). */
export const RUN_QUEUE_JOB = 'scheduler.run';
/** Queue job kind that repairs fire chains and runs whose process died. */
export const RECONCILE_QUEUE_JOB = 'scheduler.reconcile';
/** Queue job kind that reseals the callback secrets after a master-key rotation. */
export const RESEAL_QUEUE_JOB = 'scheduler.reseal-secrets';
/** Queue job kind that deletes finished runs older than `scheduler.runRetentionDays`. */
export const PRUNE_RUNS_QUEUE_JOB = 'scheduler.prune-runs';
/**
 * Queue attempts of a run job. The run's own `max_attempts` (1..20) decides
 * when a run has failed; the margin covers attempts lost with a crashed process.
 */
export const QUEUE_MAX_ATTEMPTS = 25;

/**
 * Dedupe key of the fire of `jobId` at `instant` (ms) in chain `epoch`: one
 * queue job per scheduled instant of a chain, however many replicas advance it.
 */
export function fireKey(jobId: string, epoch: number, instant: number): string {
  return `scheduler:${jobId}:fire:${epoch}:${instant}`;
}

/**
 * The job runner's fairness group of an agent's runs: at most
 * `jobs.groupConcurrency` of its callbacks are in flight at once, so an
 * agent whose callback URLs hang holds back only its own runs, while fewer
 * than `jobs.concurrency × replicas ÷ groupConcurrency` agents hang at once
 * (docs/operations.md, "Isolation holds"). By agent
 * rather than by callback URL because an agent may point any number of jobs
 * at as many URLs.
 */
export function runGroupOf(agentId: string): string {
  return `${RUN_QUEUE_JOB}:${agentId}`;
}

/** Dedupe key of retry series `series` of a run. */
export function retryKey(jobId: string, runId: string, series: number): string {
  return `scheduler:${jobId}:retry:${runId}:${series}`;
}

/** Prefix of every queue job of `jobId` (fires and retries), for cancelling them all. */
export function jobKeyPrefix(jobId: string): string {
  return `scheduler:${jobId}:`;
}
