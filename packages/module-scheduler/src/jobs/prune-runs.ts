import type { JobDefinition } from '@agentinfra/core';
import { PRUNE_RUNS_QUEUE_JOB } from '../queue-keys.js';
import type { SchedulerService } from '../service.js';

/**
 * `scheduler.prune-runs`: hourly, on one replica, deletes finished runs older
 * than `scheduler.runRetentionDays`, stopping between batches once its
 * signal aborts (the rest waits for the next run).
 */
export const pruneRunsJob: JobDefinition<SchedulerService> = {
  name: PRUNE_RUNS_QUEUE_JOB,
  schedule: { every: 3_600_000 },
  timeoutMs: 600_000,
  run: async ({ service, signal }) => {
    await service.pruneRuns({ signal });
  },
};
