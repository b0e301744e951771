import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from '@agentinfra/adapter-fs';
import { createWordVectorEmbedder } from '@agentinfra/adapter-wordvec';
import type { AnyModule, createLogger, SqlDatabase } from '@agentinfra/core';
import { seedAgentKeys, startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { defaultModules } from '@agentinfra/modules';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mcpSurface } from '../http-surface.js';

/** A server with every default module and `/mcp`, agents `alice` and `bob` with device keys. */
export interface McpTestServer {
  server: TestKernel;
  keys: { alice: string; bob: string };
  /** An SDK client connected to `/mcp` over Streamable HTTP with `credential`. */
  connect(credential: string): Promise<Client>;
  /** A delegation token from alice to bob for `scope`, ending at `expiresAt` (default in a day). */
  delegate(scope: string[], expiresAt?: Date): Promise<string>;
  /**
   * Sets the server's clock (the kernel's `clock`, which expiries are checked
   * against) `offsetMs` milliseconds ahead of the wall clock; 0 puts it back.
   * Lets a test pass an expiry at once, however long what came before took.
   */
  setClockOffset(offsetMs: number): void;
  stop(): Promise<void>;
}

const embedder = createWordVectorEmbedder();

/**
 * Starts the default modules with the MCP surface on a real port, on `sql`
 * (the SQLite/PostgreSQL matrix), the real offline embedder and a local blob
 * folder whose signed URLs this server serves; postbox mail domain `localhost`;
 * logs go to `options.logger` (default: silent).
 */
export async function startMcpTestServer(
  sql: SqlDatabase,
  options: {
    maxInlineBytes?: number;
    modules?: readonly AnyModule[];
    logger?: ReturnType<typeof createLogger>;
    /** The API's `http.bodyTimeoutMs` (default 30 s). */
    bodyTimeoutMs?: number;
    /** The API's `http.rateLimitPerMinute` (default 0 here: off). */
    rateLimitPerMinute?: number;
  } = {},
): Promise<McpTestServer> {
  let listenUrl = 'http://127.0.0.1';
  let clockOffsetMs = 0;
  const blobs = createFsBlobStore({
    dir: mkdtempSync(join(tmpdir(), 'agentinfra-mcp-')),
    publicUrl: () => listenUrl,
    signingKey: 'k'.repeat(32),
  });
  const server = await startTestKernel({
    modules: options.modules ?? defaultModules,
    adapters: { sql, embedder, blobStore: blobs.store, mounts: [blobs.mount], clock: { now: () => Date.now() + clockOffsetMs } },
    moduleConfigs: {
      'agent-gateway': { httpPort: 0, dnsServers: ['127.0.0.1:1'] },
      'agent-postbox': { smtp: { port: 0 } },
      'agent-scheduler': { minIntervalMs: 1_000 },
    },
    config: {
      allowPrivateCallbacks: true,
      http: {
        ...(options.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: options.bodyTimeoutMs }),
        ...(options.rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute: options.rateLimitPerMinute }),
      },
    },
    ...(options.logger ? { logger: options.logger } : {}),
    surfaces: [mcpSurface({ maxInlineBytes: options.maxInlineBytes })],
  });
  listenUrl = server.url;
  const keys = await seedAgentKeys(server, ['alice', 'bob'] as const);
  const clients: Client[] = [];
  return {
    server,
    keys,
    async connect(credential) {
      const client = new Client({ name: 'mcp-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${credential}` } },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async delegate(scope, expiresAt = new Date(Date.now() + 86_400_000)) {
      const response = await server.call(
        'agent-identity/delegate',
        { from_agent: 'alice', to_agent: 'bob', scope, expires_at: expiresAt.toISOString() },
        { credential: keys.alice },
      );
      if (response.status !== 200) throw new Error(`delegate: ${response.status} ${JSON.stringify(response.body)}`);
      return response.body.token as string;
    },
    setClockOffset(offsetMs) {
      clockOffsetMs = offsetMs;
    },
    async stop() {
      await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
      await server.stop();
    },
  };
}

/** POSTs `body` (JSON text, or raw bytes) to the server's /mcp as a JSON-RPC client would, with alice's key, and no x-request-id. */
export function postMcp(t: McpTestServer, body: string | Uint8Array): Promise<Response> {
  return fetch(`${t.server.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.keys.alice}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
  });
}
