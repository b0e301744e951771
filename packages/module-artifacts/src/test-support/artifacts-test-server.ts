import type { SqlDatabase } from '@agentinfra/core';
import { startModuleTestServer, type TestKernel, type TestResponse } from '@agentinfra/core/testing';
import { identityModule } from '@agentinfra/module-identity';
import type { ArtifactsConfigInput } from '../config.js';
import { artifactsModule } from '../module.js';
import type { ArtifactsService } from '../service.js';
import type { BlobBackend } from './blob-backends.js';

/** The agents every artifacts test server has. */
export const AGENTS = ['alice', 'bob', 'carol'] as const;
export type TestAgent = (typeof AGENTS)[number];

/** A kernel with identity and artifacts on one blob backend, three agents with device keys, and shortcuts. */
export interface ArtifactsTestServer {
  server: TestKernel;
  keys: Record<TestAgent, string>;
  service: ArtifactsService;
  /** POSTs to `agent-artifacts/<path>` with the device key of `as` (or an explicit credential, or none). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely, like TestKernel.call
  artifacts<T = any>(path: string, body: unknown, as: TestAgent | { credential?: string }): Promise<TestResponse<T>>;
  stop(): Promise<void>;
}

/** Starts `[identityModule, artifactsModule]` on `db` and `blobs`, and creates alice, bob and carol with device keys. */
export async function startArtifactsTestServer(options: {
  db: SqlDatabase;
  blobs: BlobBackend;
  config?: ArtifactsConfigInput;
}): Promise<ArtifactsTestServer> {
  const { server, keys, call } = await startModuleTestServer({
    module: 'agent-artifacts',
    agents: AGENTS,
    modules: [identityModule, artifactsModule],
    adapters: { sql: options.db, blobStore: options.blobs.store, mounts: options.blobs.mounts },
    moduleConfigs: { 'agent-artifacts': options.config ?? {} },
  });
  options.blobs.serverListening(server.url);
  return {
    server,
    keys,
    service: server.kernel.service<ArtifactsService>('agent-artifacts'),
    artifacts: call,
    stop: () => server.stop(),
  };
}
