import type { SqlDatabase } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { reopenableDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityModule } from './module.js';

const SECRET_VALUE = 'hunter2-audit-canary-value';

// #15: security events recorded by the kernel from the route declarations, listed with /audit/list.
describe.each(reopenableDatabases())('audit events of agent-identity on $name', ({ create }) => {
  let server: TestKernel;
  let database: Awaited<ReturnType<typeof create>>;
  let db: SqlDatabase;
  let aliceKey: string;
  let aliceDevice: string;
  let bobKey: string;
  const list = (body: Record<string, unknown>) => server.call('agent-identity/audit/list', body, { credential: server.bridgeKey });

  beforeAll(async () => {
    database = await create();
    db = database.open();
    server = await startTestKernel({ modules: [identityModule], adapters: { sql: db }, config: { audit: { refusalWindowMs: 60_000 } } });
    const bridge = { credential: server.bridgeKey };
    await server.call('agent-identity/agents/create', { agent_id: 'alice', display_name: 'Alice' }, bridge);
    await server.call('agent-identity/agents/create', { agent_id: 'bob', display_name: 'Bob' }, bridge);
    const issued = await server.call('agent-identity/device/issue', { agent_id: 'alice', label: 'laptop' }, bridge);
    aliceKey = issued.body.device_key;
    aliceDevice = issued.body.device_id;
    bobKey = (await server.call('agent-identity/device/issue', { agent_id: 'bob', label: 'ci' }, bridge)).body.device_key;
    const put = await server.call(
      'agent-identity/secrets/put',
      { agent_id: 'alice', key: 'db_password', value: SECRET_VALUE },
      { credential: aliceKey },
    );
    expect(put.status).toBe(200);
    expect(
      (await server.call('agent-identity/secrets/get', { agent_id: 'alice', key: 'db_password' }, { credential: aliceKey })).status,
    ).toBe(200);
    expect(
      (await server.call('agent-identity/secrets/get', { agent_id: 'alice', key: 'db_password' }, { credential: bobKey })).status,
    ).toBe(403);
    expect((await server.call('agent-identity/settings/set', { key: 'audit_retention_days', value: 30 }, bridge)).status).toBe(200);
    for (const credential of ['dk_not-a-key', 'dk_another-guess', undefined]) {
      expect((await server.call('agent-identity/secrets/get', { agent_id: 'alice', key: 'db_password' }, { credential })).status).toBe(401);
    }
  });

  afterAll(async () => {
    await server?.stop();
    await db?.close();
    await database?.cleanup();
  });

  it('records who issued which device key, with the actor, client and request id', async () => {
    const { status, body } = await list({ action: 'device.issue' });
    expect(status).toBe(200);
    expect(body.events).toHaveLength(2);
    const alice = body.events.find((event: { agent_id: string }) => event.agent_id === 'alice');
    expect(alice).toMatchObject({
      action: 'device.issue',
      outcome: 'success',
      actor: { kind: 'bridge', id: null, agent_id: null },
      target: `agent:alice/device:${aliceDevice}`,
      client: '127.0.0.1',
      request_id: expect.any(String),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('records secret reads and writes by key name, and a refused read as denied', async () => {
    const { body } = await list({ agent_id: 'alice', action: ['secret.get', 'secret.put'] });
    expect(
      body.events.map((event: { action: string; outcome: string; actor: { agent_id: string } }) => [
        event.action,
        event.outcome,
        event.actor.agent_id,
      ]),
    ).toEqual([
      ['secret.get', 'denied', 'bob'],
      ['secret.get', 'success', 'alice'],
      ['secret.put', 'success', 'alice'],
    ]);
    expect(body.events[0]).toMatchObject({ target: 'agent:alice/secret:db_password', detail: { status: 403 } });
    const stored = JSON.stringify(await db.knex('core_audit').select('*'));
    expect(stored).not.toContain(SECRET_VALUE);
    expect(stored).not.toContain(aliceKey);
  });

  it('records every use of the bridge key, including listing the audit log', async () => {
    await list({ limit: 1 });
    const { body } = await list({ action: 'bridge.use', limit: 5 });
    expect(body.events[0]).toMatchObject({ action: 'bridge.use', actor: { kind: 'bridge' }, target: 'agent-identity/audit/list' });
    // Scale walkthrough: bridge.use events had no agent_id, so the agent filter missed them.
    await server.call('agent-identity/secrets/list', { agent_id: 'bob' }, { credential: server.bridgeKey });
    const aboutBob = await list({ action: 'bridge.use', agent_id: 'bob', limit: 5 });
    expect(aboutBob.body.events[0]).toMatchObject({ agent_id: 'bob', target: 'agent-identity/secrets/list' });
    const setting = await list({ action: 'setting.set' });
    expect(setting.body.events[0]).toMatchObject({ target: 'setting:audit_retention_days', actor: { kind: 'bridge' } });
  });

  it('files a revocation with the bridge key under the agent of the device or delegation', async () => {
    const bridge = { credential: server.bridgeKey };
    const phone = (await server.call('agent-identity/device/issue', { agent_id: 'alice', label: 'phone' }, bridge)).body.device_id;
    const delegated = await server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['secrets.read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() },
      { credential: aliceKey },
    );
    expect(delegated.status).toBe(200);
    const device = await server.call('agent-identity/device/revoke', { device_id: phone }, bridge);
    // The agent is for the audit log only: the response keeps its documented shape.
    expect(device.body).toEqual({ device_id: phone, revoked_at: expect.any(String) });
    const delegation = await server.call('agent-identity/delegate/revoke', { delegation_id: delegated.body.delegation_id }, bridge);
    expect(delegation.body).toEqual({ delegation_id: delegated.body.delegation_id, revoked_at: expect.any(String) });

    const { body } = await list({ agent_id: 'alice', action: ['device.revoke', 'delegation.revoke'] });
    expect(body.events).toMatchObject([
      {
        action: 'delegation.revoke',
        outcome: 'success',
        agent_id: 'alice',
        actor: { kind: 'bridge', agent_id: null },
        target: `delegation:${delegated.body.delegation_id}`,
      },
      {
        action: 'device.revoke',
        outcome: 'success',
        agent_id: 'alice',
        actor: { kind: 'bridge', agent_id: null },
        target: `device:${phone}`,
      },
    ]);
    // A revocation that fails names no agent it could be filed under.
    expect((await server.call('agent-identity/device/revoke', { device_id: 'dev_unknown' }, bridge)).status).toBe(404);
    const failed = await list({ action: 'device.revoke', limit: 1 });
    expect(failed.body.events[0]).toMatchObject({ outcome: 'failed', agent_id: null, target: 'device:dev_unknown' });
  });

  it('tallies refused authentications into one event per client address', async () => {
    await server.stop();
    db = database.open();
    const rows = await db.knex('core_audit').where({ action: 'auth.refused' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor_kind: 'anonymous', outcome: 'denied', client: '127.0.0.1' });
    expect(JSON.parse(rows[0].detail)).toMatchObject({ count: 3, missing: 1, unknown: 2, limited: 0 });
  });

  it('pages with a cursor, filters by time, and refuses a forged cursor', async () => {
    const restarted = await startTestKernel({ modules: [identityModule], adapters: { sql: db } });
    try {
      const bridge = { credential: restarted.bridgeKey };
      const first = await restarted.call('agent-identity/audit/list', { limit: 3 }, bridge);
      expect(first.body.events).toHaveLength(3);
      const second = await restarted.call('agent-identity/audit/list', { limit: 3, cursor: first.body.next_cursor }, bridge);
      expect(second.body.events[0].seq).toBe(first.body.events[2].seq - 1);
      const future = await restarted.call('agent-identity/audit/list', { since: new Date(Date.now() + 60_000).toISOString() }, bridge);
      expect(future.body).toEqual({ events: [], next_cursor: null });
      const forged = await restarted.call('agent-identity/audit/list', { cursor: 'c1.e30' }, bridge);
      expect(forged.status).toBe(400);
      const device = await restarted.call('agent-identity/audit/list', {}, { credential: aliceKey });
      expect(device.status).toBe(403);
      expect((await restarted.kernel.audit.verify()).ok).toBe(true);
    } finally {
      await restarted.stop();
    }
  });
});
