import { join } from 'node:path';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import { coreConfigSchema, createKernel, createLogger, type Embedder, type Kernel, newCredential, newMasterKey } from '@agentinfra/core';
import { type IdentityService, identityModule } from '@agentinfra/module-identity';
import { type MemoryService, memoryModule } from '@agentinfra/module-memory';
import { Hono } from 'hono';

/** agentinfra running inside your own process. */
export interface EmbeddedAgentInfra {
  kernel: Kernel;
  identity: IdentityService;
  memory: MemoryService;
  /** Your own app, with agentinfra's API mounted at /functions/v1 beside your routes. */
  app: Hono;
}

/**
 * Builds the kernel with the identity and memory modules on a SQLite file in
 * `dataDir`, starts it (migrations, start-up checks, background jobs), and
 * mounts its HTTP API inside an app of your own.
 */
export async function startEmbedded(options: { dataDir: string; embedder: Embedder; masterKey?: string }): Promise<EmbeddedAgentInfra> {
  const config = coreConfigSchema.parse({
    dataDir: options.dataDir,
    bridgeKey: newCredential('bk_'),
    masterKey: options.masterKey ?? newMasterKey(),
  });
  const kernel = createKernel({
    config,
    modules: [identityModule, memoryModule],
    adapters: { sql: createSqliteDatabase({ filename: join(options.dataDir, 'agentinfra.db') }), embedder: options.embedder },
    logger: createLogger({ level: 'warn' }),
  });
  await kernel.start();

  const app = new Hono();
  app.get('/', (c) => c.text('my agent platform'));
  app.route('/', kernel.app);

  return {
    kernel,
    identity: kernel.service<IdentityService>('agent-identity'),
    memory: kernel.service<MemoryService>('agent-memory'),
    app,
  };
}
