import {
  coreConfigSchema,
  createKernel,
  createLogger,
  type Embedder,
  type Kernel,
  newCredential,
  newMasterKey,
  type SqlDatabase,
} from '@agentinfra/core';
import { startModuleTestServer, type TestKernel, type TestResponse } from '@agentinfra/core/testing';
import { identityConfigSchema, identityModule } from '@agentinfra/module-identity';
import { expect } from 'vitest';
import { memoryModule } from '../module.js';

/** The agents every memory test server has: alice and bob share team `research`; carol is in no team. */
export const AGENTS = ['alice', 'bob', 'carol'] as const;
export type TestAgent = (typeof AGENTS)[number];

/** A kernel with identity and memory, three agents with device keys, and a shortcut to call memory routes. */
export interface MemoryTestServer {
  server: TestKernel;
  keys: Record<TestAgent, string>;
  /** POSTs to `agent-memory/<path>` with the device key of `as` (or an explicit credential). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely, like TestKernel.call
  memory<T = any>(path: string, body: unknown, as: TestAgent | { credential?: string }): Promise<TestResponse<T>>;
}

/**
 * Starts `[identityModule, memoryModule]` on `db` with `embedder`, creates
 * alice, bob and carol with device keys and puts alice and bob in team
 * `research` (unless `agents: false`, for a restarted server on a store that has them).
 */
export async function startMemoryTestServer(options: {
  db: SqlDatabase;
  embedder: Embedder;
  memoryConfig?: Record<string, unknown>;
  agents?: boolean;
}): Promise<MemoryTestServer> {
  const { server, keys, bridge, call } = await startModuleTestServer({
    module: 'agent-memory',
    agents: AGENTS,
    createAgents: options.agents !== false,
    modules: [identityModule, memoryModule],
    adapters: { sql: options.db, embedder: options.embedder },
    moduleConfigs: { 'agent-identity': identityConfigSchema.parse({}), 'agent-memory': options.memoryConfig },
  });
  if (options.agents !== false) {
    for (const agent of ['alice', 'bob']) {
      expect((await server.call('agent-identity/teams/add', { team: 'research', agent_id: agent }, bridge)).status).toBe(200);
    }
  }
  return { server, keys, memory: call };
}

/**
 * A kernel with identity and memory on `db` that is built but not started
 * (to watch `start()` refuse, or to run `reembed` the way the CLI does).
 */
export function createMemoryKernel(options: { db: SqlDatabase; embedder: Embedder; memoryConfig?: Record<string, unknown> }): Kernel {
  return createKernel({
    config: coreConfigSchema.parse({
      bridgeKey: newCredential('bk_'),
      masterKey: newMasterKey(),
      port: 0,
      http: { validateResponses: true },
    }),
    modules: [identityModule, memoryModule],
    moduleConfigs: { 'agent-identity': identityConfigSchema.parse({}), 'agent-memory': options.memoryConfig },
    adapters: { sql: options.db, embedder: options.embedder },
    logger: createLogger({ level: 'silent' }),
  });
}
