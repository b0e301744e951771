import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ManualClock, type MeshTestServer, manualClock, startMeshTestServer } from './test-support/mesh-test-server.js';

// #16: the console shows the whole mesh (peers, ACL graph, PSK rotations) through these bridge-key routes.
describe.each(sqlDatabases())('agent-mesh operator routes on $name', ({ create }) => {
  let t: MeshTestServer;
  let clock: ManualClock;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    clock = manualClock();
    t = await startMeshTestServer({ db: fixture.db, clock, meshConfig: { onlineWindowSeconds: 60 } });
    await t.register('carol');
    clock.advance(120_000);
    await t.register('alice');
    await t.register('bob');
    expect((await t.mesh('acl/put', { from_agent: 'alice', to_agent: 'bob', port: 22, proto: 'tcp' }, t.bridge)).status).toBe(200);
    expect((await t.mesh('acl/put', { from_agent: 'alice', to_agent: 'bob', port: 443, proto: 'tcp' }, t.bridge)).status).toBe(200);
    expect((await t.mesh('acl/put', { from_agent: 'carol', to_agent: 'alice', port: 0, proto: 'icmp' }, t.bridge)).status).toBe(200);
    expect((await t.mesh('psk/rotate', { a: 'bob', b: 'alice' }, t.bridge)).status).toBe(200);
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it('lists every peer with its online state, page by page', async () => {
    const first = await t.mesh('admin/peers/list', { limit: 2 }, t.bridge);
    expect(first.status).toBe(200);
    expect(first.body.peers.map((peer: { agent_id: string; online: boolean }) => [peer.agent_id, peer.online])).toEqual([
      ['alice', true],
      ['bob', true],
    ]);
    const rest = await t.mesh('admin/peers/list', { limit: 2, cursor: first.body.next_cursor }, t.bridge);
    expect(rest.body).toEqual({
      peers: [expect.objectContaining({ agent_id: 'carol', online: false, address: expect.any(String), endpoint: expect.any(String) })],
      next_cursor: null,
    });
  });

  it('lists ACLs in order with the pair’s last PSK rotation, across pages and for one agent', async () => {
    const first = await t.mesh('admin/acls/list', { limit: 2 }, t.bridge);
    expect(first.body.acls).toEqual([
      expect.objectContaining({ from_agent: 'alice', to_agent: 'bob', port: 22, proto: 'tcp', psk_rotated_at: expect.any(String) }),
      expect.objectContaining({ from_agent: 'alice', to_agent: 'bob', port: 443, proto: 'tcp' }),
    ]);
    const rest = await t.mesh('admin/acls/list', { limit: 2, cursor: first.body.next_cursor }, t.bridge);
    expect(rest.body).toEqual({
      acls: [expect.objectContaining({ from_agent: 'carol', to_agent: 'alice', port: 0, proto: 'icmp', psk_rotated_at: null })],
      next_cursor: null,
    });
    const bob = await t.mesh('admin/acls/list', { agent_id: 'bob' }, t.bridge);
    expect(bob.body.acls.map((acl: { port: number }) => acl.port)).toEqual([22, 443]);
    expect(JSON.stringify(bob.body)).not.toContain('sealed');
  });

  it('counts peers, peers online and ACLs; bridge key only', async () => {
    expect((await t.mesh('admin/summary', {}, t.bridge)).body).toEqual({ peers: 3, online: 2, acls: 3 });
    expect((await t.mesh('admin/peers/list', {}, 'alice')).status).toBe(403);
    expect((await t.mesh('admin/refusals/list', {}, 'alice')).status).toBe(403);
  });

  it('lists refusals page by page, and the operator lifts one with /acl/accept', async () => {
    expect((await t.mesh('admin/refusals/list', {}, t.bridge)).body).toEqual({ refusals: [], next_cursor: null });
    expect((await t.mesh('acl/put', { from_agent: 'bob', to_agent: 'carol', port: 80, proto: 'tcp' }, t.bridge)).status).toBe(200);
    expect((await t.mesh('acl/put', { from_agent: 'bob', to_agent: 'alice', port: 80, proto: 'tcp' }, t.bridge)).status).toBe(200);
    for (const to of ['carol', 'alice']) {
      expect((await t.mesh('acl/revoke', { from_agent: 'bob', to_agent: to, port: 80, proto: 'tcp' }, 'bob')).body).toEqual({ revoked: 1 });
    }
    const first = await t.mesh('admin/refusals/list', { limit: 1 }, t.bridge);
    expect(first.body.refusals).toEqual([{ refuser: 'bob', refused: 'alice', created_at: expect.any(String) }]);
    const rest = await t.mesh('admin/refusals/list', { limit: 1, cursor: first.body.next_cursor }, t.bridge);
    expect(rest.body).toEqual({ refusals: [{ refuser: 'bob', refused: 'carol', created_at: expect.any(String) }], next_cursor: null });
    expect((await t.mesh('admin/refusals/list', { cursor: 'c1.bm9wZQ' }, t.bridge)).status).toBe(400);
    expect((await t.mesh('acl/accept', { from_agent: 'bob', to_agent: 'carol' }, t.bridge)).body.lifted).toBe(1);
    expect((await t.mesh('admin/refusals/list', {}, t.bridge)).body.refusals.map((row: { refused: string }) => row.refused)).toEqual([
      'alice',
    ]);
  });
});
