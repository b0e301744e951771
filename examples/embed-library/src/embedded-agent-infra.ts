import { join } from 'node:path';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import {
  coreConfigSchema,
  createKernel,
  createLogger,
  type Embedder,
  errorResponse,
  type Kernel,
  NotFoundError,
  newCredential,
  newMasterKey,
} from '@agentinfra/core';
import { type IdentityService, identityModule } from '@agentinfra/module-identity';
import { type MemoryService, memoryModule } from '@agentinfra/module-memory';
import { Hono } from 'hono';

/** agentinfra running inside your own process. */
export interface EmbeddedAgentInfra {
  kernel: Kernel;
  identity: IdentityService;
  memory: MemoryService;
  /**
   * Your own app, with agentinfra's API mounted at /functions/v1 beside your
   * routes; any other path (a module not loaded here included) answers 404
   * with the CONTRACT.md JSON error body, as `agentinfra serve` does.
   */
  app: Hono;
}

/**
 * Builds the kernel with the identity and memory modules on a SQLite file in
 * `dataDir`, starts it (migrations, start-up checks, background jobs), and
 * mounts its HTTP API inside an app of your own. The bridge key is random
 * and never leaves the process: call the API over HTTP with a device key
 * from `identity.issueDevice`.
 * @param options.dataDir folder for the SQLite file.
 * @param options.masterKey base64 32-byte key sealing secrets (random when absent).
 * @throws whatever `kernel.start()` throws (bad config, a failed migration or start-up check).
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
  // `app.route` copies the kernel's routes but not its not-found handler: answer as the kernel does.
  app.notFound((c) => errorResponse(c, new NotFoundError(`No route ${c.req.method} ${c.req.path}.`)));

  return {
    kernel,
    identity: kernel.service<IdentityService>('agent-identity'),
    memory: kernel.service<MemoryService>('agent-memory'),
    app,
  };
}
