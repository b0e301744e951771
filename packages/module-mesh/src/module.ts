import { defineModule } from '@agentinfra/core';
import { meshConfigSchema, meshEnv } from './config.js';
import { meshMigrations } from './migrations/index.js';
import { meshRoutes } from './routes.js';
import { createMeshService } from './service.js';

/**
 * agent-mesh: the coordination plane of a WireGuard mesh between agents.
 * Peers register public keys and endpoints and get a mesh address; ACLs
 * say who may reach whom on which port; /wg_config renders a wg-quick file
 * (with pairwise PSKs sealed at rest and nftables rules for the ACLs) that
 * `agentinfra wg-config` completes with the host's private key.
 */
export const meshModule = defineModule({
  name: 'agent-mesh',
  ports: ['sql', 'clock', 'secretBox'],
  migrations: meshMigrations,
  permissions: ['mesh.read', 'mesh.write'],
  config: { key: 'mesh', schema: meshConfigSchema, env: meshEnv },
  service: (deps) => createMeshService(deps),
  routes: meshRoutes,
});
