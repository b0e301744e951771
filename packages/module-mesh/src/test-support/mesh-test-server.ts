import { randomBytes } from 'node:crypto';
import type { Clock, SqlDatabase } from '@agentinfra/core';
import { startModuleTestServer, type TestKernel, type TestResponse } from '@agentinfra/core/testing';
import { identityConfigSchema, identityModule } from '@agentinfra/module-identity';
import { expect } from 'vitest';
import { meshModule } from '../module.js';

/** The agents every mesh test server has, each with a device key. */
export const AGENTS = ['alice', 'bob', 'carol'] as const;
export type TestAgent = (typeof AGENTS)[number];

/** A clock tests move by hand. */
export interface ManualClock extends Clock {
  advance(ms: number): void;
}

/** A clock starting at the real time that only moves when told. */
export function manualClock(): ManualClock {
  let now = Date.now();
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

/** A kernel with identity and mesh, three agents with device keys, and a shortcut to call mesh routes. */
export interface MeshTestServer {
  server: TestKernel;
  keys: Record<TestAgent, string>;
  bridge: { credential: string };
  /** POSTs to `agent-mesh/<path>` with the device key of `as` (or an explicit credential). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies field by field
  mesh<T = any>(
    path: string,
    body: unknown,
    as: TestAgent | { credential?: string; headers?: Record<string, string> },
  ): Promise<TestResponse<T>>;
  /** Creates the agents that do not exist yet (the bridge key acts only for existing agents). */
  createAgents(...agents: string[]): Promise<void>;
  /** Creates `agent` when needed and registers it with a fresh random public key; returns the key and the answer. */
  register(agent: string, endpoint?: string): Promise<{ pubkey: string; address: string }>;
}

/** A random 32-byte value in base64: a well-formed WireGuard public key for tests that never build a tunnel. */
export function randomPublicKey(): string {
  return randomBytes(32).toString('base64');
}

/**
 * Starts `[identityModule, meshModule]` on `db` and creates alice, bob and
 * carol with device keys (`agents: false` only issues new keys, for a
 * restarted server whose store already has them).
 */
export async function startMeshTestServer(options: {
  db: SqlDatabase;
  meshConfig?: Record<string, unknown>;
  clock?: Clock;
  /** Master keys (base64, 32 bytes), for a restarted server that must open what an earlier one sealed. */
  masterKey?: string;
  previousMasterKeys?: string[];
  jobs?: { enabled?: boolean };
  agents?: boolean;
  /** Serve on a real port (default); `false` answers calls through `app.request()` for tests that need no socket. */
  listen?: boolean;
}): Promise<MeshTestServer> {
  const {
    server,
    keys,
    bridge,
    call: mesh,
  } = await startModuleTestServer({
    module: 'agent-mesh',
    agents: AGENTS,
    createAgents: options.agents !== false,
    listen: options.listen,
    modules: [identityModule, meshModule],
    adapters: { sql: options.db, ...(options.clock ? { clock: options.clock } : {}) },
    moduleConfigs: { 'agent-identity': identityConfigSchema.parse({}), 'agent-mesh': options.meshConfig },
    config: {
      ...(options.masterKey ? { masterKey: options.masterKey } : {}),
      ...(options.previousMasterKeys ? { previousMasterKeys: options.previousMasterKeys } : {}),
      ...(options.jobs ? { jobs: options.jobs } : {}),
    },
  });
  const createAgents = async (...agents: string[]) => {
    for (const agent of agents) {
      const created = await server.call('agent-identity/agents/create', { agent_id: agent, display_name: agent }, bridge);
      expect([200, 409]).toContain(created.status);
    }
  };
  return {
    server,
    keys,
    bridge,
    mesh,
    createAgents,
    async register(agent, endpoint = '192.0.2.1:51820') {
      await createAgents(agent);
      const pubkey = randomPublicKey();
      const response = await mesh('peer/register', { agent_id: agent, pubkey, endpoint }, bridge);
      expect(response.status).toBe(200);
      return { pubkey, address: response.body.address as string };
    },
  };
}

/** The value of every `key = value` line named `key` in a wg-quick text, in order. */
export function configValues(config: string, key: string): string[] {
  return config
    .split('\n')
    .map((line) => new RegExp(`^${key}\\s*=\\s*(.*)$`).exec(line.trim())?.[1])
    .filter((value): value is string => value !== undefined);
}

/** The `[Peer]` sections of a wg-quick text as `{ PublicKey, PresharedKey, AllowedIPs, Endpoint, … }`, by the agent id in its comment. */
export function configPeers(config: string): Map<string, Record<string, string>> {
  const peers = new Map<string, Record<string, string>>();
  for (const section of config.split('[Peer]').slice(1)) {
    const agent = /^#\s*(\S+)$/m.exec(section)?.[1] ?? '';
    const fields: Record<string, string> = {};
    for (const match of section.matchAll(/^(\w+)\s*=\s*(.*)$/gm)) fields[match[1] as string] = match[2] as string;
    peers.set(agent, fields);
  }
  return peers;
}
