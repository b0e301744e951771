import { type Clock, createHttpDelivery, type HttpDelivery, type SqlDatabase } from '@agentinfra/core';
import { startModuleTestServer, type TestKernel, type TestResponse } from '@agentinfra/core/testing';
import { identityConfigSchema, identityModule } from '@agentinfra/module-identity';
import { schedulerModule } from '../module.js';

/** The agents every scheduler test server has. */
export const AGENTS = ['alice', 'bob'] as const;
export type TestAgent = (typeof AGENTS)[number];

/** A kernel with identity and scheduler, agents with device keys, and a shortcut to call scheduler routes. */
export interface SchedulerTestServer {
  server: TestKernel;
  keys: Record<TestAgent, string>;
  /** POSTs to `agent-scheduler/<path>` with the device key of `as` (or an explicit credential). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely, like TestKernel.call
  scheduler<T = any>(path: string, body: unknown, as: TestAgent | { credential?: string }): Promise<TestResponse<T>>;
}

/**
 * Starts `[identityModule, schedulerModule]` on `db` (job runner polling every
 * 50 ms, retries after 20–200 ms) with a delivery that may reach loopback
 * (`allowPrivate`, default true), and creates alice and bob with device keys
 * (unless `agents: false`, for a restarted server on a store that has them;
 * give both servers the same `masterKey`). Calls run in process unless `listen`.
 */
export async function startSchedulerTestServer(options: {
  db: SqlDatabase;
  schedulerConfig?: Record<string, unknown>;
  allowPrivate?: boolean;
  delivery?: HttpDelivery;
  clock?: Clock;
  agents?: boolean;
  jobs?: { enabled?: boolean; pollIntervalMs?: number };
  /** `http.shutdownGraceMs`: how long `server.stop()` lets running jobs finish before interrupting them. */
  shutdownGraceMs?: number;
  /** Base64 master key; a restarted server needs the first one's to open the sealed secrets. */
  masterKey?: string;
  /** Earlier master keys whose seals must still open (a server in the middle of a rotation). */
  previousMasterKeys?: string[];
  /** Serve the API on a loopback port (`server.url`), for tests that read real HTTP answers (default false). */
  listen?: boolean;
}): Promise<SchedulerTestServer> {
  const clock = options.clock;
  const delivery = options.delivery ?? createHttpDelivery({ allowPrivate: options.allowPrivate ?? true, ...(clock ? { clock } : {}) });
  const { server, keys, call } = await startModuleTestServer({
    module: 'agent-scheduler',
    agents: AGENTS,
    createAgents: options.agents !== false,
    // Most tests need no socket (callbacks go out, nothing comes in): calls then run through app.request().
    listen: options.listen ?? false,
    modules: [identityModule, schedulerModule],
    adapters: { sql: options.db, delivery, ...(clock ? { clock } : {}) },
    config: {
      jobs: { pollIntervalMs: 50, retryBaseMs: 20, retryMaxMs: 200, ...options.jobs },
      ...(options.shutdownGraceMs === undefined ? {} : { http: { shutdownGraceMs: options.shutdownGraceMs } }),
      ...(options.masterKey ? { masterKey: options.masterKey } : {}),
      ...(options.previousMasterKeys ? { previousMasterKeys: options.previousMasterKeys } : {}),
    },
    moduleConfigs: {
      'agent-identity': identityConfigSchema.parse({}),
      'agent-scheduler': { minIntervalMs: 1_000, ...options.schedulerConfig },
    },
  });
  return { server, keys, scheduler: call };
}

/**
 * A 6-field cron expression (UTC) that fires once, at the first whole second
 * at least `inMs` from now (and again only a year later).
 */
export function cronOnceIn(inMs: number): { cadence: string; at: number } {
  const at = Math.ceil((Date.now() + inMs) / 1000) * 1000;
  const date = new Date(at);
  const cadence = `${date.getUTCSeconds()} ${date.getUTCMinutes()} ${date.getUTCHours()} ${date.getUTCDate()} ${date.getUTCMonth() + 1} *`;
  return { cadence, at };
}
