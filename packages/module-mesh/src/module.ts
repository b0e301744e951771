import { defineModule } from '@agentinfra/core';
import { meshAdminRoutes } from './admin-routes.js';
import { meshConfigSchema, meshEnv } from './config.js';
import { meshMigrations } from './migrations/index.js';
import { meshPermissions } from './permissions.js';
import { meshRoutes } from './routes.js';
import { createMeshService, type MeshService } from './service.js';

/**
 * agent-mesh: the coordination plane of a WireGuard mesh between agents.
 * Peers register public keys and endpoints and get a mesh address; ACLs
 * say who may reach whom on which port; /wg_config renders a wg-quick file
 * (with pairwise PSKs sealed at rest and nftables rules for the ACLs) that
 * `agentinfra wg-config` completes with the host's private key. The hourly
 * `mesh.reseal-keys` job reseals the PSKs after a master-key rotation.
 */
export const meshModule = defineModule({
  name: 'agent-mesh',
  description: 'WireGuard peers, mesh addresses, ACLs, pairwise pre-shared keys and wg-quick configs.',
  ports: ['sql', 'clock', 'secretBox'],
  migrations: meshMigrations,
  permissions: meshPermissions,
  config: { key: 'mesh', schema: meshConfigSchema, env: meshEnv },
  service: (deps) => createMeshService(deps),
  routes: [...meshRoutes, ...meshAdminRoutes],
  jobs: [
    {
      // Finishes a master-key rotation: PSKs sealed with a previous key are sealed again with the current one.
      name: 'mesh.reseal-keys',
      schedule: { every: 3_600_000 },
      timeoutMs: 600_000,
      run: async ({ service, signal }: { service: MeshService; signal: AbortSignal }) => {
        await service.resealKeys({ signal });
      },
    },
  ],
});
