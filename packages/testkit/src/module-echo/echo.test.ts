import { credentialsPort, defineModule, type Principal, provide } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlDatabases } from '../sql-databases.js';
import { echoModule } from './module.js';
import { type EchoLog, echoLogPort, greeterPort } from './ports.js';

/**
 * The module contract (#12): a module declared outside core, identity and
 * the CLI mounts with its routes, permission, ports, migration and job.
 * A companion module provides the greeter echo requires and requires the
 * log echo provides.
 */
const principals: Record<string, Principal> = {
  dk_alice: { kind: 'device', agentId: 'alice', deviceId: 'dev_alice' },
  dt_say: { kind: 'delegation', agentId: 'alice', delegationId: 'dlg_say', toAgent: 'bob', permissions: ['echo.say'] },
  dt_other: { kind: 'delegation', agentId: 'alice', delegationId: 'dlg_other', toAgent: 'bob', permissions: ['other.thing'] },
};

/** The registered agents are those the credentials above act for; the verifier's `missingAgents` answers with the others. */
const registered = new Set(Object.values(principals).flatMap((principal) => (principal.kind === 'bridge' ? [] : [principal.agentId])));
const unregistered = (agentIds: readonly string[]) => agentIds.filter((agentId) => !registered.has(agentId));

const companionModule = defineModule({
  name: 'agent-companion',
  ports: [echoLogPort],
  migrations: {},
  permissions: [],
  // Provided ports exist once every module's service does: resolve them when used, not while constructing.
  service: (deps): { log: () => EchoLog } => ({ log: () => deps.use(echoLogPort) }),
  routes: [],
  provides: [
    provide(greeterPort, () => ({ greet: ({ agentId }) => `hello ${agentId}` })),
    provide(credentialsPort, () => ({
      verify: async ({ credential }) => principals[credential] ?? null,
      missingAgents: async ({ agentIds }) => unregistered(agentIds),
    })),
  ],
});

describe.each(sqlDatabases())('a module from outside core on $name (#12)', ({ create }) => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    server = await startTestKernel({ modules: [companionModule, echoModule], adapters: { sql: fixture.db } });
  });

  afterAll(async () => {
    await server.stop();
    await cleanup();
  });

  it('serves its routes with its permission, its migration applied and the port it requires', async () => {
    const said = await server.call('agent-echo/say', { agent_id: 'alice', text: 'hi' }, { credential: 'dt_say' });
    expect(said.status).toBe(200);
    expect(said.body).toEqual({ reply: 'hello alice: hi', said: 1 });
    expect((await server.call('agent-echo/say', { agent_id: 'alice', text: 'x' }, { credential: 'dt_other' })).status).toBe(403);
    expect((await server.call('agent-echo/say', { agent_id: 'alice', text: 'again' }, { credential: 'dk_alice' })).body.said).toBe(2);
  });

  it('provides its port to other modules and runs its job', async () => {
    const companion = server.kernel.service<{ log: () => EchoLog }>('agent-companion');
    expect(await companion.log().count({ agentId: 'alice' })).toBe(2);
    await expect
      .poll(async () => (await server.call('agent-echo/heard', { agent_id: 'alice' }, { credential: server.bridgeKey })).body, {
        timeout: 5_000,
      })
      .toEqual({ said: 2, heard: 2 });
  });

  it('appears in the OpenAPI document and the permission registry', () => {
    const paths = server.kernel.openapi().paths as Record<string, unknown>;
    expect(Object.keys(paths)).toEqual(['/functions/v1/agent-echo/say', '/functions/v1/agent-echo/heard']);
    expect(server.kernel.modules.flatMap((module) => module.permissions)).toEqual(['echo.say']);
  });
});

describe('module contract checks (#12)', () => {
  it('refuses a module whose required port nobody provides, naming it', async () => {
    const fixture = await sqlDatabases()[0]!.create();
    try {
      await expect(startTestKernel({ modules: [echoModule], adapters: { sql: fixture.db }, listen: false })).rejects.toThrow(
        /needs the port "echo.greeter" \(greets an agent by id\)/,
      );
    } finally {
      await fixture.cleanup();
    }
  });

  it('refuses a route that checks a permission its module does not declare', async () => {
    const fixture = await sqlDatabases()[0]!.create();
    const sloppy = defineModule({ ...echoModule, name: 'agent-sloppy', permissions: [] });
    try {
      await expect(startTestKernel({ modules: [companionModule, sloppy], adapters: { sql: fixture.db }, listen: false })).rejects.toThrow(
        /checks "echo.say", which "agent-sloppy" does not declare/,
      );
    } finally {
      await fixture.cleanup();
    }
  });
});
