import type { SqlDatabase } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityModule } from './module.js';

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

// #16: the console lists agents, devices and delegations across agents through these bridge-key routes.
describe.each(sqlDatabases())('agent-identity operator routes on $name', ({ create }) => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;
  let db: SqlDatabase;
  let aliceKey: string;
  let revokedDevice: string;
  const bridge = () => ({ credential: server.bridgeKey });

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    db = fixture.db;
    server = await startTestKernel({ modules: [identityModule], adapters: { sql: db } });
    for (const [id, name] of [
      ['alice', 'Alice Liddell'],
      ['bob', 'Bob Builder'],
      ['carol', 'Carol 100%_done'],
      ['dave', 'Dave'],
      ['erin', 'Erin'],
    ]) {
      expect((await server.call('agent-identity/agents/create', { agent_id: id, display_name: name }, bridge())).status).toBe(200);
    }
    aliceKey = (await server.call('agent-identity/device/issue', { agent_id: 'alice', label: 'laptop' }, bridge())).body.device_key;
    revokedDevice = (await server.call('agent-identity/device/issue', { agent_id: 'alice', label: 'old phone' }, bridge())).body.device_id;
    expect((await server.call('agent-identity/device/revoke', { device_id: revokedDevice }, bridge())).status).toBe(200);
    await server.call('agent-identity/device/issue', { agent_id: 'bob', label: 'ci' }, bridge());
    const delegated = await server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['secrets.read'], expires_at: inDays(1) },
      { credential: aliceKey },
    );
    expect(delegated.status).toBe(200);
    await server.call('agent-identity/teams/add', { team: 'ops', agent_id: 'alice' }, bridge());
    await server.call('agent-identity/secrets/put', { agent_id: 'alice', key: 'api', value: 'hunter2' }, { credential: aliceKey });
  });

  afterAll(async () => {
    await server?.stop();
    await cleanup?.();
  });

  it('pages through every agent in id order with active device counts', async () => {
    const first = await server.call('agent-identity/admin/agents/list', { limit: 2 }, bridge());
    expect(first.status).toBe(200);
    expect(first.body.agents).toEqual([
      { agent_id: 'alice', display_name: 'Alice Liddell', created_at: expect.any(String), active_devices: 1 },
      { agent_id: 'bob', display_name: 'Bob Builder', created_at: expect.any(String), active_devices: 1 },
    ]);
    const ids: string[] = first.body.agents.map((agent: { agent_id: string }) => agent.agent_id);
    let cursor = first.body.next_cursor as string | null;
    while (cursor) {
      const next = await server.call('agent-identity/admin/agents/list', { limit: 2, cursor }, bridge());
      expect(next.status).toBe(200);
      ids.push(...next.body.agents.map((agent: { agent_id: string }) => agent.agent_id));
      cursor = next.body.next_cursor;
    }
    expect(ids).toEqual(['alice', 'bob', 'carol', 'dave', 'erin']);
  });

  it('searches ids and display names case-insensitively, with LIKE wildcards taken literally', async () => {
    const byName = await server.call('agent-identity/admin/agents/list', { query: 'BUILD' }, bridge());
    expect(byName.body.agents.map((agent: { agent_id: string }) => agent.agent_id)).toEqual(['bob']);
    const literal = await server.call('agent-identity/admin/agents/list', { query: '%_' }, bridge());
    expect(literal.body.agents.map((agent: { agent_id: string }) => agent.agent_id)).toEqual(['carol']);
    const none = await server.call('agent-identity/admin/agents/list', { query: 'zz' }, bridge());
    expect(none.body).toEqual({ agents: [], next_cursor: null });
  });

  it('shows one agent with teams and counts, never secret values', async () => {
    const alice = await server.call('agent-identity/admin/agents/get', { agent_id: 'alice' }, bridge());
    expect(alice.body).toEqual({
      agent_id: 'alice',
      display_name: 'Alice Liddell',
      created_at: expect.any(String),
      teams: ['ops'],
      active_devices: 1,
      active_delegations: 1,
      secrets: 1,
    });
    expect(JSON.stringify(alice.body)).not.toContain('hunter2');
    expect((await server.call('agent-identity/admin/agents/get', { agent_id: 'nobody' }, bridge())).status).toBe(404);
  });

  it('lists devices newest first with their state and no key material', async () => {
    const devices = await server.call('agent-identity/admin/devices/list', { agent_id: 'alice' }, bridge());
    expect(devices.status).toBe(200);
    expect(devices.body.devices.map((device: { label: string; state: string }) => [device.label, device.state]).sort()).toEqual([
      ['laptop', 'active'],
      ['old phone', 'revoked'],
    ]);
    expect(JSON.stringify(devices.body)).not.toMatch(/dk_|key_hash/);
    const paged = await server.call('agent-identity/admin/devices/list', { agent_id: 'alice', limit: 1 }, bridge());
    const rest = await server.call(
      'agent-identity/admin/devices/list',
      { agent_id: 'alice', limit: 1, cursor: paged.body.next_cursor },
      bridge(),
    );
    expect([paged.body.devices[0].label, rest.body.devices[0].label]).toEqual(
      devices.body.devices.map((device: { label: string }) => device.label),
    );
    expect(rest.body.next_cursor).toBeNull();
  });

  it('lists delegations from and to an agent without tokens', async () => {
    for (const agent of ['alice', 'bob']) {
      const listed = await server.call('agent-identity/admin/delegations/list', { agent_id: agent }, bridge());
      expect(listed.body.delegations).toEqual([
        expect.objectContaining({ from_agent: 'alice', to_agent: 'bob', scope: ['secrets.read'], state: 'active', revoked_at: null }),
      ]);
      expect(JSON.stringify(listed.body)).not.toContain('dt_');
    }
  });

  it('counts agents, active devices and delegations', async () => {
    const summary = await server.call('agent-identity/admin/summary', {}, bridge());
    expect(summary.body).toEqual({ agents: 5, active_devices: 2, active_delegations: 1 });
  });

  it('takes the bridge key only, refuses forged cursors, and is in the OpenAPI document', async () => {
    const asAgent = await server.call('agent-identity/admin/agents/list', {}, { credential: aliceKey });
    expect(asAgent.status).toBe(403);
    expect((await server.call('agent-identity/admin/agents/list', {}, {})).status).toBe(401);
    const forged = await server.call('agent-identity/admin/agents/list', { cursor: 'c1.bm9wZQ' }, bridge());
    expect(forged.status).toBe(400);
    expect(forged.body.error.details.fields[0].path).toBe('cursor');
    // A well-formed position whose id escapes NUL: PostgreSQL would refuse it as a bind parameter (a 500).
    const nul = `c1.${Buffer.from('{"a":"alice\\u0000"}').toString('base64url')}`;
    const withNul = await server.call('agent-identity/admin/agents/list', { cursor: nul }, bridge());
    expect(withNul.status).toBe(400);
    expect(withNul.body.error.details.fields[0].path).toBe('cursor');
    const paths = Object.keys((server.kernel.openapi() as { paths: Record<string, unknown> }).paths);
    for (const path of ['agents/list', 'agents/get', 'devices/list', 'delegations/list', 'summary']) {
      expect(paths).toContain(`/functions/v1/agent-identity/admin/${path}`);
    }
  });
});

// SQLite's lower() maps ASCII only: the search compares display names folded by JavaScript, on both engines.
describe.each(sqlDatabases())('agent search beyond ASCII on $name', ({ create }) => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;
  const search = async (query: string) => {
    const listed = await server.call('agent-identity/admin/agents/list', { query }, { credential: server.bridgeKey });
    expect(listed.status).toBe(200);
    return listed.body.agents.map((agent: { agent_id: string }) => agent.agent_id);
  };

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    server = await startTestKernel({ modules: [identityModule], adapters: { sql: fixture.db } });
    for (const [agent_id, display_name] of [
      ['elodie', 'Élodie Ünal'],
      ['ivan', 'ИВАН Петров'],
      ['percent', 'Sale 50% off'],
      ['under', 'snake_case'],
      ['plain', 'Plain 50 percent'],
    ]) {
      const created = await server.call('agent-identity/agents/create', { agent_id, display_name }, { credential: server.bridgeKey });
      expect(created.status).toBe(200);
    }
  });

  afterAll(async () => {
    await server?.stop();
    await cleanup?.();
  });

  it('finds a display name with non-ASCII capitals in any case', async () => {
    for (const query of ['Élodie', 'élodie', 'ÉLODIE', 'ünal', 'ÜNAL', 'E\u0301lodie']) expect(await search(query)).toEqual(['elodie']);
    expect(await search('иван')).toEqual(['ivan']);
    expect(await search('ПЕТРОВ')).toEqual(['ivan']);
    expect(await search('ELODIE')).toEqual(['elodie']);
  });

  it('still takes % and _ in a query literally', async () => {
    expect(await search('%')).toEqual(['percent']);
    expect(await search('0% O')).toEqual(['percent']);
    expect(await search('_')).toEqual(['under']);
    expect(await search('E_C')).toEqual(['under']);
    expect(await search('50%')).toEqual(['percent']);
  });
});
