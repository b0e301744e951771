import { defineModule } from '@agentinfra/core';
import { memoryConfigSchema, memoryEnv } from './config.js';
import { memoryMigrations } from './migrations/index.js';
import { memoryRoutes } from './routes.js';
import { createMemoryService } from './service.js';

/**
 * agent-memory: episodes, semantic memories searchable by similarity, key/value
 * entries and sets of memory ids, scoped `self` / `team:<name>`. Needs an
 * embedder, its vector index and the identity module's team directory.
 * Start-up refuses a store embedded with another embedder (run
 * `agentinfra migrate --reembed`).
 */
export const memoryModule = defineModule({
  name: 'agent-memory',
  ports: ['sql', 'vectorIndex', 'embedder', 'teams', 'clock'],
  migrations: memoryMigrations,
  permissions: ['memory.read', 'memory.write', 'memory.forget'],
  config: { key: 'memory', schema: memoryConfigSchema, env: memoryEnv },
  service: (deps) => createMemoryService(deps),
  routes: memoryRoutes,
  start: (service) => service.start(),
});
