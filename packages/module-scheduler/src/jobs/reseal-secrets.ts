import type { JobDefinition } from '@agentinfra/core';
import { RESEAL_QUEUE_JOB } from '../queue-keys.js';
import type { SchedulerService } from '../service.js';

/**
 * `scheduler.reseal-secrets`: hourly, on one replica, finishes a master-key
 * rotation: callback secrets sealed with a previous key are sealed again
 * with the current one.
 */
export const resealSecretsJob: JobDefinition<SchedulerService> = {
  name: RESEAL_QUEUE_JOB,
  schedule: { every: 3_600_000 },
  timeoutMs: 600_000,
  run: async ({ service, signal }) => {
    await service.resealSecrets({ signal });
  },
};
