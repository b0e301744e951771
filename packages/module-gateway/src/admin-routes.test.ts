import type { SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayTestServer, startGatewayTestServer } from './test-support/gateway-test-server.js';

const DAY_MS = 86_400_000;

/** Binds `host` to `agent` and, with `expiresInDays`, stores a certificate ending then (rows only: no ACME run). */
async function seedHost(db: SqlDatabase, host: string, agent: string, expiresInDays?: number) {
  const now = Date.now();
  await db
    .knex('gateway_hosts')
    .insert({ host, host_id: `hst_${host}`, agent_id: agent, bound_at: now, ips: '["192.0.2.1"]', ips_updated_at: null });
  if (expiresInDays === undefined) return;
  await db.knex('gateway_certificates').insert({
    host,
    cert_id: `crt_${host}`,
    host_id: `hst_${host}`,
    agent_id: agent,
    order_id: `ord_${host}`,
    directory_url: 'https://acme.test/directory',
    chain_pem: '-----BEGIN CERTIFICATE-----',
    key_sealed: 'sealed',
    serial: '01',
    not_before: now - DAY_MS,
    not_after: now + expiresInDays * DAY_MS,
    issued_at: now - DAY_MS,
  });
}

// #16: the console pages through hosts and shows certificates by urgency through these bridge-key routes.
describe.each(sqlDatabases())('agent-gateway operator routes on $name', ({ create }) => {
  let t: GatewayTestServer;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startGatewayTestServer({ db: fixture.db, gateway: { httpPort: 0, dnsServers: ['127.0.0.1:1'] }, jobs: { enabled: false } });
    await seedHost(fixture.db, 'a.example.test', 'alice', 60.5);
    await seedHost(fixture.db, 'b.example.test', 'alice', 3.5);
    await seedHost(fixture.db, 'c.example.test', 'bob', -0.5);
    await seedHost(fixture.db, 'd.example.test', 'bob');
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it('pages through hosts as /list describes them', async () => {
    const first = await t.gateway('admin/hosts/list', { limit: 3 }, 'bridge');
    expect(first.status).toBe(200);
    expect(
      first.body.hosts.map((host: { host: string; days_remaining: number | null; cert_status: string }) => [
        host.host,
        host.days_remaining,
        host.cert_status,
      ]),
    ).toEqual([
      ['a.example.test', 60, 'valid'],
      ['b.example.test', 3, 'valid'],
      ['c.example.test', -1, 'expired'],
    ]);
    const rest = await t.gateway('admin/hosts/list', { limit: 3, cursor: first.body.next_cursor }, 'bridge');
    expect(rest.body.hosts).toEqual([
      expect.objectContaining({ host: 'd.example.test', cert_status: 'none', cert_expires_at: null, ips: ['192.0.2.1'] }),
    ]);
    expect(rest.body.next_cursor).toBeNull();
  });

  it('keeps only certificates expiring within N days, and one agent’s hosts', async () => {
    const soon = await t.gateway('admin/hosts/list', { expiring_within_days: 14 }, 'bridge');
    expect(soon.body.hosts.map((host: { host: string }) => host.host)).toEqual(['b.example.test', 'c.example.test']);
    const bob = await t.gateway('admin/hosts/list', { agent_id: 'bob' }, 'bridge');
    expect(bob.body.hosts.map((host: { host: string }) => host.host)).toEqual(['c.example.test', 'd.example.test']);
  });

  it('counts hosts, certificates, expiring and expired ones; bridge key only', async () => {
    expect((await t.gateway('admin/summary', {}, 'bridge')).body).toEqual({
      hosts: 4,
      certificates: 3,
      expiring_soon: 1,
      expired: 1,
      expiring_soon_days: 14,
    });
    expect((await t.gateway('admin/hosts/list', {}, 'alice')).status).toBe(403);
  });
});
