import { defineModule } from '@agentinfra/core';
import { schedulerAdminRoutes } from './admin-routes.js';
import { schedulerConfigSchema, schedulerEnv } from './config.js';
import { pruneRunsJob } from './jobs/prune-runs.js';
import { reconcileJob } from './jobs/reconcile.js';
import { resealSecretsJob } from './jobs/reseal-secrets.js';
import { runCallbackJob } from './jobs/run-callback.js';
import { schedulerMigrations } from './migrations/index.js';
import { schedulerPermissions } from './permissions.js';
import { schedulerRoutes } from './routes.js';
import { createSchedulerService } from './service.js';

/**
 * agent-scheduler: jobs that POST a signed `job.run` callback to an agent's
 * HTTPS URL on a cron or `@every` cadence, with retries and a run history.
 * Fires and attempts run on the core job runner, so several replicas on
 * PostgreSQL share the work and fire each instant once. Needs the `delivery`
 * port (signed deliveries with the SSRF guard) and the SecretBox; the hourly
 * `scheduler.reseal-secrets` job reseals the callback secrets after a
 * master-key rotation; the hourly `scheduler.prune-runs` job deletes finished
 * runs older than `scheduler.runRetentionDays`.
 */
export const schedulerModule = defineModule({
  name: 'agent-scheduler',
  description:
    'Cron and @every jobs that call back signed HTTPS URLs, with retries and run history; each instant fires once across replicas, delivered at least once.',
  ports: ['sql', 'jobs', 'clock', 'delivery', 'secretBox', 'logger', 'metrics', 'settings'],
  migrations: schedulerMigrations,
  permissions: schedulerPermissions,
  config: { key: 'scheduler', schema: schedulerConfigSchema, env: schedulerEnv },
  service: (deps) => createSchedulerService(deps),
  routes: [...schedulerRoutes, ...schedulerAdminRoutes],
  jobs: [runCallbackJob, reconcileJob, resealSecretsJob, pruneRunsJob],
});
