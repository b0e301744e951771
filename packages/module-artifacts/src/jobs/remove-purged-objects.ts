import type { JobDefinition } from '@agentinfra/core';
import type { ArtifactsService } from '../service.js';

/**
 * Every ten minutes: deletes the objects of purged artifacts that their purge
 * could not delete, and the discarded copies of commits whose delete failed
 * (left queued), so that a server that keeps running does not keep them
 * until its next start.
 */
export const removePurgedObjectsJob: JobDefinition<ArtifactsService> = {
  name: 'artifacts.remove-purged-objects',
  schedule: { every: 600_000 },
  run: async ({ service, signal }) => {
    await service.removePurgedObjects({ signal });
  },
};
