import { defineModule } from '@agentinfra/core';
import { postboxAdminRoutes } from './admin-routes.js';
import { postboxConfigSchema, postboxEnv } from './config.js';
import { postboxJobs } from './jobs/postbox-jobs.js';
import { postboxMigrations } from './migrations/index.js';
import { postboxPermissions } from './permissions.js';
import { postboxRoutes } from './routes.js';
import { createPostboxService } from './service.js';

/**
 * agent-postbox: e-mail addresses for agents, a bundled MTA (`smtp-server`,
 * started with the kernel on `postbox.smtp.port`) and /ingest for external
 * MTAs, prompt-injection scoring with quarantine, rules, outbound mail
 * through a relay under a per-agent quota, and Standard Webhooks deliveries
 * through the durable job runner. Needs a blob store for raw MIME.
 */
export const postboxModule = defineModule({
  name: 'agent-postbox',
  description: 'Mail addresses, a bundled SMTP server, injection scoring and quarantine, rules, quotas, outbound mail and signed webhooks.',
  ports: ['sql', 'clock', 'jobs', 'settings', 'rateLimiter', 'blobStore', 'delivery', 'secretBox', 'agents', 'logger', 'metrics'],
  migrations: postboxMigrations,
  permissions: postboxPermissions,
  config: { key: 'postbox', schema: postboxConfigSchema, env: postboxEnv },
  service: (deps) => createPostboxService(deps),
  routes: [...postboxRoutes, ...postboxAdminRoutes],
  jobs: postboxJobs,
  start: (service) => service.start(),
  describe: (service) => {
    const smtp = service.smtpAddress();
    return smtp ? `smtp on ${smtp.host}:${smtp.port}${smtp.starttls ? ' (STARTTLS)' : ''}` : undefined;
  },
  stop: (service) => service.stop(),
});
