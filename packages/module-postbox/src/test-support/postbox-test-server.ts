import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from '@agentinfra/adapter-fs';
import {
  type BlobStore,
  type Clock,
  createHttpDelivery,
  type HostResolver,
  type PortMap,
  type RateLimiter,
  type SqlDatabase,
} from '@agentinfra/core';
import { startModuleTestServer, type TestKernel, type TestResponse } from '@agentinfra/core/testing';
import { identityModule } from '@agentinfra/module-identity';
import { expect } from 'vitest';
import { postboxModule } from '../module.js';
import type { PostboxService } from '../service.js';

/** The agents every postbox test server has, each with a device key and the address `<agent>@agents.test`. */
export const AGENTS = ['alice', 'bob'] as const;
export type TestAgent = (typeof AGENTS)[number];
export const MAIL_DOMAIN = 'agents.test';

/** A kernel with identity and postbox, two agents, a blob folder, and shortcuts. */
export interface PostboxTestServer {
  server: TestKernel;
  service: PostboxService;
  blobStore: BlobStore;
  keys: Record<TestAgent, string>;
  bridge: { credential: string };
  /** The bundled MTA's port. */
  smtpPort: number;
  /** POSTs to `agent-postbox/<path>` with the device key of `as` (or an explicit credential). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies field by field
  postbox<T = any>(path: string, body: unknown, as: TestAgent | { credential?: string }): Promise<TestResponse<T>>;
  stop(): Promise<void>;
}

/** Options of {@link startPostboxTestServer}. */
export interface PostboxTestServerOptions {
  /** The database the kernel runs on; its `stop()` closes it. */
  db: SqlDatabase;
  postboxConfig?: Record<string, unknown>;
  allowPrivate?: boolean;
  resolver?: HostResolver;
  clock?: Clock;
  rateLimiter?: RateLimiter;
  jobsEnabled?: boolean;
  /** Key sealing webhook secrets at rest (default: a fresh one); a restarted server needs the first one's to read them. */
  masterKey?: string;
  /** Older master keys that still open values (a rotation in progress). */
  previousMasterKeys?: string[];
  /** Wraps the fs blob store (e.g. to make writes fail). */
  wrapBlobStore?: (store: BlobStore) => BlobStore;
  /** Milliseconds `stop()` lets running jobs finish before aborting them (kernel `http.shutdownGraceMs`, default 10 000). */
  shutdownGraceMs?: number;
  /** Create the agents and their addresses (default true; false for a second replica on the same database). */
  seed?: boolean;
  /** The kernel's logger (default: silent), e.g. a captured one whose lines the test reads. */
  logger?: PortMap['logger'];
}

/**
 * Starts `[identityModule, postboxModule]` on `db` with the bundled MTA on a
 * free port, an fs blob store in a temp folder, and signed delivery that may
 * reach loopback (unless `allowPrivate: false`).
 */
export async function startPostboxTestServer(options: PostboxTestServerOptions): Promise<PostboxTestServer> {
  const blobDir = await mkdtemp(join(tmpdir(), 'agentinfra-postbox-'));
  let base = 'http://127.0.0.1';
  const blobs = createFsBlobStore({ dir: blobDir, publicUrl: () => base, signingKey: randomBytes(32), durable: false });
  const blobStore = options.wrapBlobStore ? options.wrapBlobStore(blobs.store) : blobs.store;
  const agents = options.seed === false ? [] : AGENTS;
  const {
    server,
    keys,
    bridge,
    call: postbox,
  } = await startModuleTestServer({
    module: 'agent-postbox',
    agents,
    modules: [identityModule, postboxModule],
    ...(options.logger ? { logger: options.logger } : {}),
    adapters: {
      sql: options.db,
      blobStore,
      mounts: [blobs.mount],
      delivery: createHttpDelivery({
        allowPrivate: options.allowPrivate ?? true,
        ...(options.resolver ? { resolver: options.resolver } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
      }),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
    },
    config: {
      jobs: { enabled: options.jobsEnabled ?? true },
      ...(options.masterKey ? { masterKey: options.masterKey } : {}),
      ...(options.previousMasterKeys ? { previousMasterKeys: options.previousMasterKeys } : {}),
      ...(options.shutdownGraceMs === undefined ? {} : { http: { shutdownGraceMs: options.shutdownGraceMs } }),
    },
    moduleConfigs: {
      'agent-postbox': { mailDomain: MAIL_DOMAIN, smtp: { port: 'auto' }, ...options.postboxConfig },
    },
  });
  base = server.url;
  const service = server.kernel.service<PostboxService>('agent-postbox');
  for (const agent of agents) {
    const allocated = await server.call('agent-postbox/alloc', { agent_id: agent, local_part: agent }, { credential: keys[agent] });
    expect(allocated.status).toBe(200);
  }
  return {
    server,
    service,
    blobStore,
    keys,
    bridge,
    smtpPort: service.smtpAddress()?.port ?? 0,
    postbox,
    async stop() {
      await server.stop();
      await rm(blobDir, { recursive: true, force: true });
    },
  };
}
