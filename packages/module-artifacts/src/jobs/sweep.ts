import type { JobDefinition } from '@agentinfra/core';
import type { ArtifactsService } from '../service.js';

/**
 * Daily at 03:17 UTC: deletes expired artifacts, abandoned registrations and
 * long-ended grants, stopping between batches once its signal aborts (the rest
 * waits for the next run).
 */
export const sweepJob: JobDefinition<ArtifactsService> = {
  name: 'artifacts.sweep',
  schedule: { cron: '17 3 * * *' },
  timeoutMs: 3_600_000,
  run: async ({ service, signal }) => {
    await service.sweep({ signal });
  },
};
