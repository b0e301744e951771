import type { Clock, SqlDatabase } from '@agentinfra/core';
import { startModuleTestServer, type TestKernel, type TestResponse } from '@agentinfra/core/testing';
import { identityModule } from '@agentinfra/module-identity';
import { expect } from 'vitest';
import type { GatewayConfigInput } from '../config.js';
import { createGatewayModule } from '../module.js';
import type { GatewayExtensions, GatewayService } from '../service.js';

/** The agents of every gateway test server. */
export const AGENTS = ['alice', 'bob'] as const;
export type TestAgent = (typeof AGENTS)[number];

/** A clock tests can move forward (`offsetMs`). */
export interface TestClock extends Clock {
  offsetMs: number;
}

/** A wall clock plus a movable offset. */
export function testClock(): TestClock {
  const clock = { offsetMs: 0, now: () => Date.now() + clock.offsetMs };
  return clock;
}

/** A kernel with identity and gateway, alice and bob with device keys, and shortcuts. */
export interface GatewayTestServer {
  server: TestKernel;
  keys: Record<TestAgent, string>;
  service: GatewayService;
  /** POSTs to `agent-gateway/<path>` as `as` (an agent's device key, `bridge`, or an explicit credential). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely, like TestKernel.call
  gateway<T = any>(path: string, body: unknown, as: TestAgent | 'bridge' | { credential?: string }): Promise<TestResponse<T>>;
  /** Polls /list until `host` reaches one of `statuses` (cert_status); returns its entry. */
  // biome-ignore lint/suspicious/noExplicitAny: a /list entry, read loosely
  waitForCert(host: string, statuses: readonly string[], timeoutMs?: number): Promise<any>;
}

/**
 * Starts `[identityModule, gateway]` on `db` with the `gateway` config
 * section, creates alice and bob (unless `agents: false`, for a restarted
 * server on a store that has them) and issues device keys.
 */
export async function startGatewayTestServer(options: {
  db: SqlDatabase;
  gateway: GatewayConfigInput;
  extensions?: GatewayExtensions;
  clock?: Clock;
  jobs?: { enabled?: boolean };
  agents?: boolean;
  /** The master key (base64, 32 bytes), for a restarted server that must open what the first one sealed. */
  masterKey?: string;
  /** Earlier master keys still configured (a restart in the middle of a master-key rotation). */
  previousMasterKeys?: string[];
}): Promise<GatewayTestServer> {
  const { server, keys, bridge, call } = await startModuleTestServer({
    module: 'agent-gateway',
    agents: AGENTS,
    createAgents: options.agents !== false,
    modules: [identityModule, createGatewayModule(options.extensions)],
    adapters: { sql: options.db, ...(options.clock ? { clock: options.clock } : {}) },
    moduleConfigs: { 'agent-gateway': options.gateway },
    config: {
      jobs: { pollIntervalMs: 50, retryBaseMs: 20, retryMaxMs: 200, ...options.jobs },
      http: { shutdownGraceMs: 0 },
      ...(options.masterKey ? { masterKey: options.masterKey } : {}),
      ...(options.previousMasterKeys ? { previousMasterKeys: options.previousMasterKeys } : {}),
    },
  });
  const gateway: GatewayTestServer['gateway'] = (path, body, as) => call(path.replace(/^\//, ''), body, as === 'bridge' ? bridge : as);
  return {
    server,
    keys,
    service: server.kernel.service<GatewayService>('agent-gateway'),
    gateway,
    async waitForCert(host, statuses, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      let last: unknown;
      while (Date.now() < deadline) {
        const listed = await gateway('/list', {}, 'bridge');
        last = listed.body.hosts?.find((entry: { host: string }) => entry.host === host);
        if (last && statuses.includes((last as { cert_status: string }).cert_status)) return last;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`Host ${host} did not reach ${statuses.join('/')} in ${timeoutMs} ms; last /list entry: ${JSON.stringify(last)}`);
    },
  };
}

/**
 * Claims `host` for `agent` the way an agent does: the first /host/claim
 * hands out the TXT value, `publish` puts it in DNS, the second call binds.
 */
export async function claimHost(
  test: GatewayTestServer,
  agent: TestAgent,
  host: string,
  publish: (name: string, value: string) => Promise<void>,
): Promise<void> {
  const first = await test.gateway('/host/claim', { agent_id: agent, host }, agent);
  expect(first.status).toBe(422);
  await publish(first.body.error.details.record_name, first.body.error.details.record_value);
  const second = await test.gateway('/host/claim', { agent_id: agent, host }, agent);
  expect(second.status, JSON.stringify(second.body)).toBe(200);
}
