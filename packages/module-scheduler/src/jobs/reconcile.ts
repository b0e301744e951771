import type { JobDefinition } from '@agentinfra/core';
import { RECONCILE_QUEUE_JOB } from '../queue-keys.js';
import type { SchedulerService } from '../service.js';

/** `scheduler.reconcile`: every minute, on one replica, repairs broken fire chains and interrupted runs. */
export const reconcileJob: JobDefinition<SchedulerService> = {
  name: RECONCILE_QUEUE_JOB,
  schedule: { every: 60_000 },
  maxAttempts: 1,
  run: async ({ service }) => {
    await service.reconcile();
  },
};
