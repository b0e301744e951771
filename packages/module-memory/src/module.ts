import { defineModule } from '@agentinfra/core';
import { memoryAdminRoutes } from './admin-routes.js';
import { memoryConfigSchema, memoryEnv } from './config.js';
import { memoryMigrations } from './migrations/index.js';
import { memoryPermissions } from './permissions.js';
import { memoryRoutes } from './routes.js';
import { createMemoryService, type MemoryService } from './service.js';

/**
 * agent-memory: episodes, semantic memories found by hybrid search (vector +
 * full text), key/value entries and sets of memory ids, scoped `self` /
 * `team:<name>`. Needs an embedder, its vector index, the SQL database's
 * lexical index and the identity module's team directory.
 * Start-up refuses a store embedded with another embedder (run
 * `agentinfra migrate --reembed`).
 */
export const memoryModule = defineModule({
  name: 'agent-memory',
  description: 'Episodes and semantic memories ranked by meaning, key/value entries, named sets, and forgetting by provenance.',
  ports: ['sql', 'vectorIndex', 'embedder', 'teams', 'clock', 'logger', 'settings'],
  migrations: memoryMigrations,
  permissions: memoryPermissions,
  config: { key: 'memory', schema: memoryConfigSchema, env: memoryEnv },
  service: (deps) => createMemoryService(deps),
  routes: [...memoryRoutes, ...memoryAdminRoutes],
  start: (service) => service.start(),
  jobs: [
    {
      // Retries vector removals a failed forget left queued (their memories are gone already, so hidden from queries).
      name: 'memory.remove-forgotten-vectors',
      schedule: { every: 600_000 },
      run: async ({ service, signal }: { service: MemoryService; signal: AbortSignal }) => {
        await service.removeForgottenVectors({ signal });
      },
    },
  ],
});
