import { defineModule } from '@agentinfra/core';
import { artifactsAdminRoutes } from './admin-routes.js';
import { artifactsConfigSchema, artifactsEnv } from './config.js';
import { removePurgedObjectsJob } from './jobs/remove-purged-objects.js';
import { sweepJob } from './jobs/sweep.js';
import { uploadCleanupJob } from './jobs/upload-cleanup.js';
import { artifactsMigrations } from './migrations/index.js';
import { artifactsPermissions } from './permissions.js';
import { artifactsRoutes } from './routes.js';
import { createArtifactsService } from './service.js';

/**
 * agent-artifacts: files agents upload straight to the blob store (fs or S3)
 * with signed URLs, committed after the server verified size and SHA-256,
 * shared through grant tokens that /fetch turns into short-lived download URLs.
 * A daily job deletes expired artifacts and abandoned registrations; objects
 * whose deletion failed are deleted at start and every ten minutes.
 */
export const artifactsModule = defineModule({
  name: 'agent-artifacts',
  description:
    'Files: register, PUT the bytes to a signed URL, commit with a verified SHA-256, share with grants, download by short-lived signed URLs.',
  ports: ['sql', 'blobStore', 'clock', 'jobs', 'lock', 'agents', 'logger', 'settings'],
  migrations: artifactsMigrations,
  permissions: artifactsPermissions,
  config: { key: 'artifacts', schema: artifactsConfigSchema, env: artifactsEnv },
  service: (deps) => createArtifactsService(deps),
  routes: [...artifactsRoutes, ...artifactsAdminRoutes],
  start: (service) => service.removePurgedObjects(),
  jobs: [sweepJob, uploadCleanupJob, removePurgedObjectsJob],
});
