import type { JobDefinition } from '@agentinfra/core';
import { uploadCleanupPayloadSchema } from '../schemas.js';
import { type ArtifactsService, UPLOAD_CLEANUP_JOB } from '../service.js';

/**
 * Enqueued by /commit for the end of the upload window: removes bytes PUT to
 * the upload URL after the commit, unless its signal already aborted.
 */
export const uploadCleanupJob: JobDefinition<ArtifactsService> = {
  name: UPLOAD_CLEANUP_JOB,
  run: async ({ service, payload, signal }) => {
    await service.cleanupUpload(uploadCleanupPayloadSchema.parse(payload), { signal });
  },
};
