import { defineModule } from '@agentinfra/core';
import { gatewayAdminRoutes } from './admin-routes.js';
import { gatewayConfigSchema, gatewayEnv } from './config.js';
import { gatewayJobs } from './jobs/gateway-jobs.js';
import { gatewayMigrations } from './migrations/index.js';
import { gatewayPermissions } from './permissions.js';
import { gatewayRoutes } from './routes.js';
import { createGatewayService, type GatewayExtensions } from './service.js';

/**
 * Builds the agent-gateway module with replaced parts (a DNS provider for
 * DNS-01 other than RFC 2136, another TXT lookup); `gatewayModule` is the
 * default build.
 */
export function createGatewayModule(extensions: GatewayExtensions = {}) {
  return defineModule({
    name: 'agent-gateway',
    description: 'Hostnames verified by DNS TXT records, ACME certificates with renewal, and IP reports.',
    ports: ['sql', 'clock', 'secretBox', 'jobs', 'logger', 'metrics', 'config', 'settings'],
    migrations: gatewayMigrations,
    permissions: gatewayPermissions,
    config: { key: 'gateway', schema: gatewayConfigSchema, env: gatewayEnv },
    service: (deps) => createGatewayService(deps, extensions),
    routes: [...gatewayRoutes, ...gatewayAdminRoutes],
    jobs: gatewayJobs,
    start: (service) => service.start(),
    stop: (service) => service.stop(),
  });
}

/**
 * agent-gateway: hostnames bound to agents after a DNS TXT proof, ACME
 * certificates (RFC 8555, `acme-client`) by HTTP-01 on its own listener or
 * DNS-01 through RFC 2136, renewed daily at a third of their lifetime left,
 * revoked on release, and the hosts' IP addresses.
 */
export const gatewayModule = createGatewayModule();
