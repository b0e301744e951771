import type { EnvBinding } from '@agentinfra/core';
import { z } from 'zod';

/** Longest callback timeout accepted in config, ms (the run job's own timeout is a little longer). */
export const MAX_CALLBACK_TIMEOUT_MS = 300_000;

/** The `scheduler` section of the config. */
export const schedulerConfigSchema = z.object({
  /**
   * Shortest time between two fires of one job, ms: `@every` intervals below it
   * and cron expressions firing more often are refused with 400. Default 10 s.
   */
  minIntervalMs: z.number().int().min(1_000).max(86_400_000).default(10_000),
  /**
   * Milliseconds one callback may take (connect to the receiver's status; its body is not waited for)
   * before the attempt fails. Default 30 s.
   */
  callbackTimeoutMs: z.number().int().min(100).max(MAX_CALLBACK_TIMEOUT_MS).default(30_000),
  /**
   * A fire that starts more than this many ms after its instant counts as
   * missed (the server was down or overloaded): jobs with `catch_up: "skip"`
   * drop it, jobs with `catch_up: "once"` run it once. Default 60 s.
   */
  missedAfterMs: z.number().int().min(1_000).max(86_400_000).default(60_000),
  /**
   * After `/job/put` replaces a job's secret, callbacks are signed with the
   * new and the replaced secret for this many ms (CONTRACT.md "Signed
   * deliveries"), then with the new one only. Default 24 h.
   */
  secretRotationGraceMs: z.number().int().min(0).max(2_592_000_000).default(86_400_000),
  /** Finished runs are deleted this many days after they finished (hourly `scheduler.prune-runs`). Default 30. */
  runRetentionDays: z.number().int().min(1).max(3_650).default(30),
  /** Characters of a failed attempt's error kept on the run. */
  maxErrorLength: z.number().int().min(32).max(4_000).default(500),
});
/** The validated `scheduler` config section. */
export type SchedulerConfig = z.output<typeof schedulerConfigSchema>;
/** The `scheduler` config section as written in `agentinfra.config.json` (every field optional). */
export type SchedulerConfigInput = z.input<typeof schedulerConfigSchema>;

/** Environment variables of the scheduler section. */
export const schedulerEnv: readonly EnvBinding[] = [
  { name: 'AGENTINFRA_SCHEDULER_MIN_INTERVAL_MS', path: ['minIntervalMs'], type: 'integer' },
  { name: 'AGENTINFRA_SCHEDULER_CALLBACK_TIMEOUT_MS', path: ['callbackTimeoutMs'], type: 'integer' },
  { name: 'AGENTINFRA_SCHEDULER_MISSED_AFTER_MS', path: ['missedAfterMs'], type: 'integer' },
  { name: 'AGENTINFRA_SCHEDULER_RUN_RETENTION_DAYS', path: ['runRetentionDays'], type: 'integer' },
  { name: 'AGENTINFRA_SCHEDULER_SECRET_ROTATION_GRACE_MS', path: ['secretRotationGraceMs'], type: 'integer' },
];
