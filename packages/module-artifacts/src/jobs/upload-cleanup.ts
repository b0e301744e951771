import type { JobDefinition } from '@agentinfra/core';
import { z } from 'zod';
import { type ArtifactsService, UPLOAD_CLEANUP_JOB } from '../service.js';

const payloadSchema = z.object({ artifact_id: z.string().min(1) });

/** Enqueued by /commit for the end of the upload window: removes bytes PUT to the upload URL after the commit. */
export const uploadCleanupJob: JobDefinition<ArtifactsService> = {
  name: UPLOAD_CLEANUP_JOB,
  run: async ({ service, payload }) => {
    await service.cleanupUpload({ artifactId: payloadSchema.parse(payload).artifact_id });
  },
};
