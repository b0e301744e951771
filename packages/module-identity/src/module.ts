import { credentialsPort, defineModule, provide, teamsPort } from '@agentinfra/core';
import { identityAdminRoutes } from './admin-routes.js';
import { identityAuditRoutes } from './audit-routes.js';
import { identityConfigSchema, identityEnv } from './config.js';
import { identityMigrations } from './migrations/index.js';
import { identityPermissions } from './permissions.js';
import { identityRoutes } from './routes.js';
import { createIdentityService, type IdentityService } from './service.js';

/**
 * agent-identity: agents, device keys, delegations, encrypted secrets,
 * settings and teams. Provides the kernel's credential verifier (which also
 * tells the kernel which agents exist) and the team directory other modules
 * use for `team:<name>` scopes.
 */
export const identityModule = defineModule({
  name: 'agent-identity',
  description: 'Agents, device keys (shown once, stored hashed), delegation tokens, AES-256-GCM secrets, service settings and teams.',
  ports: ['sql', 'clock', 'secretBox', 'settings', 'permissions', 'audit'],
  migrations: identityMigrations,
  permissions: identityPermissions,
  config: { key: 'identity', schema: identityConfigSchema, env: identityEnv },
  service: (deps) => createIdentityService(deps),
  routes: [...identityRoutes, ...identityAdminRoutes, ...identityAuditRoutes],
  jobs: [
    {
      name: 'identity.expiry-sweep',
      schedule: { every: 3_600_000 },
      run: async ({ service, signal }: { service: IdentityService; signal: AbortSignal }) => {
        await service.sweepExpired({ signal });
      },
    },
    {
      // Finishes a master-key rotation: values sealed with a previous key are sealed again with the current one.
      name: 'identity.reseal-secrets',
      schedule: { every: 3_600_000 },
      run: async ({ service, signal }: { service: IdentityService; signal: AbortSignal }) => {
        await service.resealSecrets({ signal });
      },
    },
  ],
  provides: [
    provide(credentialsPort, (service: IdentityService) => ({
      verify: ({ credential }) => service.verifyCredential(credential),
      missingAgents: ({ agentIds }) => service.missingAgents(agentIds),
    })),
    provide(teamsPort, (service: IdentityService) => ({
      isMember: (options) => service.isMember(options),
      teamsOf: ({ agentId }) => service.teamsOf(agentId),
    })),
  ],
});
