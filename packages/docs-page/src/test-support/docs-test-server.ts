import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from '@agentinfra/adapter-fs';
import { createWordVectorEmbedder } from '@agentinfra/adapter-wordvec';
import type { KernelAdapters } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { defaultModules } from '@agentinfra/modules';
import { sqlDatabases } from '@agentinfra/testkit';
import { docsSurface } from '../docs-surface.js';

/** A running server with every module and `/docs`, and how to stop it. */
export interface DocsTestServer {
  server: TestKernel;
  stop(): Promise<void>;
}

/**
 * Starts the seven modules with the docs surface on a real port, on SQLite,
 * the offline word-vector embedder and a local blob folder; `adapters`
 * replaces or adds adapters (e.g. a delivery adapter with a fake resolver).
 */
export async function startDocsTestServer(adapters: Partial<KernelAdapters> = {}): Promise<DocsTestServer> {
  const fixture = await sqlDatabases()[0]!.create();
  const blobs = createFsBlobStore({
    dir: mkdtempSync(join(tmpdir(), 'agentinfra-docs-')),
    publicUrl: () => 'http://127.0.0.1',
    signingKey: 'k'.repeat(32),
  });
  const server = await startTestKernel({
    modules: defaultModules,
    adapters: { sql: fixture.db, embedder: createWordVectorEmbedder(), blobStore: blobs.store, mounts: [blobs.mount], ...adapters },
    moduleConfigs: {
      'agent-gateway': { httpPort: 0, dnsServers: ['127.0.0.1:1'] },
      'agent-postbox': { smtp: { port: 0 } },
    },
    surfaces: [docsSurface()],
  });
  return {
    server,
    async stop() {
      await server.stop();
      await fixture.cleanup();
    },
  };
}
