import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from '@agentinfra/adapter-fs';
import { createWordVectorEmbedder } from '@agentinfra/adapter-wordvec';
import type { SqlDatabase } from '@agentinfra/core';
import { seedAgentKeys, startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { artifactsModule } from '@agentinfra/module-artifacts';
import { gatewayModule } from '@agentinfra/module-gateway';
import { identityModule } from '@agentinfra/module-identity';
import { memoryModule } from '@agentinfra/module-memory';
import { meshModule } from '@agentinfra/module-mesh';
import { postboxModule } from '@agentinfra/module-postbox';
import { schedulerModule } from '@agentinfra/module-scheduler';
import { consoleSurface } from '../surface.js';

/** The mail domain of the test server's postbox. */
export const MAIL_DOMAIN = 'agents.test';

/** A server with every default module and the console, agents `alice` and `bob` with device keys and addresses. */
export interface ConsoleTestServer {
  server: TestKernel;
  keys: { alice: string; bob: string };
  /** The bundled MTA's port. */
  smtpPort: number;
  /** POSTs to `/functions/v1/<path>` with the bridge key; throws unless 200. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read whichever fields the route returns
  bridge<T = any>(path: string, body: unknown): Promise<T>;
  /** Signs in through the console's form with the bridge key; resolves with the session cookie (`name=value`). */
  signIn(): Promise<string>;
  /** Registers, uploads and commits `content` as alice's artifact `key` (text/plain); resolves with its id and SHA-256 (hex). */
  uploadArtifact(key: string, content: Buffer): Promise<{ artifactId: string; sha256: string }>;
}

/**
 * Starts the seven modules with the console on a real port on `sql`, with
 * the bundled SMTP server on a free port, loopback callbacks allowed, and a
 * failed-authentication limit of 20 a minute (so a wrong key counts).
 */
export async function startConsoleTestServer(sql: SqlDatabase): Promise<ConsoleTestServer> {
  let listenUrl = 'http://127.0.0.1';
  const blobs = createFsBlobStore({
    dir: mkdtempSync(join(tmpdir(), 'agentinfra-console-')),
    publicUrl: () => listenUrl,
    signingKey: 'k'.repeat(32),
  });
  const server = await startTestKernel({
    modules: [identityModule, memoryModule, artifactsModule, meshModule, gatewayModule, postboxModule, schedulerModule],
    adapters: { sql, embedder: createWordVectorEmbedder(), blobStore: blobs.store, mounts: [blobs.mount] },
    moduleConfigs: {
      'agent-gateway': { httpPort: 0, dnsServers: ['127.0.0.1:1'] },
      // One attempt per webhook delivery: a failing receiver's deliveries fail at once, for the Redeliver button.
      'agent-postbox': { mailDomain: MAIL_DOMAIN, smtp: { port: 'auto' }, webhookMaxAttempts: 1 },
      'agent-scheduler': { minIntervalMs: 1_000 },
    },
    config: { allowPrivateCallbacks: true, http: { failedAuthPerMinute: 20 } },
    surfaces: [consoleSurface()],
  });
  listenUrl = server.url;
  const keys = await seedAgentKeys(server, ['alice', 'bob'] as const);
  const bridge = async (path: string, body: unknown) => {
    const response = await server.call(path, body, { credential: server.bridgeKey });
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  for (const agent of ['alice', 'bob'] as const) {
    const allocated = await server.call('agent-postbox/alloc', { agent_id: agent, local_part: agent }, { credential: keys[agent] });
    if (allocated.status !== 200) throw new Error(`alloc ${agent}: ${allocated.status} ${JSON.stringify(allocated.body)}`);
  }
  const signIn = async () => {
    const signedIn = await fetch(`${server.url}/console/login`, {
      method: 'POST',
      headers: { origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: server.bridgeKey }).toString(),
      redirect: 'manual',
    });
    return (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
  };
  const uploadArtifact = async (key: string, content: Buffer) => {
    const as = { credential: keys.alice };
    const registered = await server.call(
      'agent-artifacts/register',
      { agent_id: 'alice', key, mime: 'text/plain', size: content.length },
      as,
    );
    await fetch(registered.body.upload_url, { method: 'PUT', body: content, headers: registered.body.upload_headers });
    const sha256 = createHash('sha256').update(content).digest('hex');
    const committed = await server.call('agent-artifacts/commit', { artifact_id: registered.body.artifact_id, sha256 }, as);
    if (committed.status !== 200) throw new Error(`commit ${key}: ${committed.status} ${JSON.stringify(committed.body)}`);
    return { artifactId: registered.body.artifact_id as string, sha256 };
  };
  const smtp = server.kernel.service<{ smtpAddress(): { port: number } | null }>('agent-postbox').smtpAddress();
  return { server, keys, smtpPort: smtp?.port ?? 0, bridge, signIn, uploadArtifact };
}
