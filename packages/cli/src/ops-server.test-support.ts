import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createFsBlobStore } from '@agentinfra/adapter-fs';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import { type CoreConfigInput, createLogger } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { defaultModules } from '@agentinfra/modules';
import { createHashEmbedder } from './hash-embedder.test-support.js';

/** A kernel with every default module on a fresh SQLite file, its log lines captured. */
export interface OpsServer {
  server: TestKernel;
  /** Everything logged so far (JSON lines). */
  log(): string;
  /** Stops the kernel and removes its folder. */
  stop(): Promise<void>;
}

/**
 * Starts every default module on a real port with a real SQLite database and
 * blob folder, logging at `trace` (everything) into memory (the SMTP listener on a free
 * port, callbacks to loopback allowed, scheduler intervals from 1 s).
 */
export async function startOpsServer(options: { config?: Partial<CoreConfigInput> } = {}): Promise<OpsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-ops-'));
  let captured = '';
  const destination = new Writable({
    write(chunk, _encoding, done) {
      captured += chunk.toString();
      done();
    },
  });
  const sql = createSqliteDatabase({ filename: join(dir, 'agentinfra.db') });
  let listenUrl = '';
  const blobs = createFsBlobStore({ dir: join(dir, 'blobs'), publicUrl: () => listenUrl, signingKey: 'k'.repeat(32) });
  const server = await startTestKernel({
    modules: defaultModules,
    adapters: { sql, embedder: createHashEmbedder(), blobStore: blobs.store, mounts: [blobs.mount] },
    moduleConfigs: {
      'agent-gateway': { httpPort: 0, dnsServers: ['127.0.0.1:1'] },
      'agent-postbox': { smtp: { port: 'auto' } },
      'agent-scheduler': { minIntervalMs: 1_000 },
    },
    config: { allowPrivateCallbacks: true, ...options.config },
    logger: createLogger({ level: 'trace', destination }),
  });
  listenUrl = server.url;
  return {
    server,
    log: () => captured,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
