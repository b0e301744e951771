import type { SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderStatus } from './gateway-rows.js';
import { type GatewayTestServer, startGatewayTestServer } from './test-support/gateway-test-server.js';

async function seedHost(db: SqlDatabase, host: string, agent: string) {
  await db
    .knex('gateway_hosts')
    .insert({ host, host_id: `hst_${host}`, agent_id: agent, bound_at: Date.now(), ips: '[]', ips_updated_at: null });
}

/** An order row for `host` (rows only: no ACME run); `hostId` defaults to the host's current binding. */
async function seedOrder(
  db: SqlDatabase,
  input: { host: string; agent: string; orderId: string; status: OrderStatus; createdAt: number; hostId?: string; error?: string },
) {
  const live = input.status === 'queued' || input.status === 'processing';
  await db.knex('gateway_orders').insert({
    order_id: input.orderId,
    host: input.host,
    host_id: input.hostId ?? `hst_${input.host}`,
    agent_id: input.agent,
    active_host: live ? input.host : null,
    status: input.status,
    reason: 'issue',
    challenge: 'http-01',
    directory_url: 'https://acme.test/directory',
    acme_order_url: null,
    key_sealed: null,
    job_id: null,
    attempts: 1,
    last_error: input.error ?? null,
    problem: null,
    created_at: input.createdAt,
    updated_at: input.createdAt,
    finished_at: live ? null : input.createdAt,
  });
}

type ListedHost = { host: string; cert_status: string; order: { order_id: string; status: string; error: string | null } | null };

// /list reads each host's latest order only (index (host_id, created_at, order_id)), never its whole order history.
describe.each(sqlDatabases())('agent-gateway /list latest orders on $name', ({ create }) => {
  let t: GatewayTestServer;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startGatewayTestServer({ db: fixture.db, gateway: { httpPort: 0, dnsServers: ['127.0.0.1:1'] }, jobs: { enabled: false } });
    const db = fixture.db;
    const base = Date.now() - 100_000;
    await seedHost(db, 'a.example.test', 'alice');
    // Inserted out of order: the latest by created_at is shown, not the last inserted.
    await seedOrder(db, {
      host: 'a.example.test',
      agent: 'alice',
      orderId: 'ord_a1',
      status: 'failed',
      createdAt: base + 1,
      error: 'first',
    });
    await seedOrder(db, {
      host: 'a.example.test',
      agent: 'alice',
      orderId: 'ord_a3',
      status: 'failed',
      createdAt: base + 3,
      error: 'third',
    });
    await seedOrder(db, { host: 'a.example.test', agent: 'alice', orderId: 'ord_a2', status: 'valid', createdAt: base + 2 });
    await seedHost(db, 'b.example.test', 'alice');
    await seedOrder(db, { host: 'b.example.test', agent: 'alice', orderId: 'ord_b1', status: 'failed', createdAt: base + 1 });
    await seedOrder(db, { host: 'b.example.test', agent: 'alice', orderId: 'ord_b2', status: 'queued', createdAt: base + 5 });
    // Same created_at: the greater order_id wins, so the answer does not depend on the engine's row order.
    await seedHost(db, 'c.example.test', 'bob');
    await seedOrder(db, { host: 'c.example.test', agent: 'bob', orderId: 'ord_c2', status: 'failed', createdAt: base + 7 });
    await seedOrder(db, { host: 'c.example.test', agent: 'bob', orderId: 'ord_c1', status: 'valid', createdAt: base + 7 });
    // Orders of an earlier binding of the same name (another host_id) are not this binding's.
    await seedHost(db, 'd.example.test', 'bob');
    await seedOrder(db, {
      host: 'd.example.test',
      agent: 'carol',
      orderId: 'ord_d1',
      status: 'failed',
      createdAt: base + 9,
      hostId: 'hst_old',
    });
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it('shows each host’s latest order and the certificate status it implies', async () => {
    const listed = await t.gateway('/list', {}, 'bridge');
    expect(listed.status).toBe(200);
    expect(Object.keys(listed.body)).toEqual(['hosts']);
    expect(
      listed.body.hosts.map((host: ListedHost) => [host.host, host.cert_status, host.order?.order_id ?? null, host.order?.status ?? null]),
    ).toEqual([
      ['a.example.test', 'failed', 'ord_a3', 'failed'],
      ['b.example.test', 'pending', 'ord_b2', 'queued'],
      ['c.example.test', 'failed', 'ord_c2', 'failed'],
      ['d.example.test', 'none', null, null],
    ]);
    expect(listed.body.hosts[0].order).toEqual(expect.objectContaining({ error: 'third', attempts: 1, problem: null }));
  });

  it('shows the same latest orders for one agent’s hosts', async () => {
    const alice = await t.gateway('/list', { agent_id: 'alice' }, 'bridge');
    expect(alice.body.hosts.map((host: ListedHost) => [host.host, host.order?.order_id])).toEqual([
      ['a.example.test', 'ord_a3'],
      ['b.example.test', 'ord_b2'],
    ]);
  });
});

// Review: order ids are random, so orders of one binding made within one millisecond were ranked by a coin toss, and
// after the clock stepped back by creation time backwards: /list showed a finished order while a newer one ran.
describe.each(sqlDatabases())('agent-gateway /list latest order when the clock stands still or steps back on $name', ({ create }) => {
  const clock = { at: Date.now(), now: () => clock.at };
  let t: GatewayTestServer;
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    db = fixture.db;
    cleanup = fixture.cleanup;
    t = await startGatewayTestServer({ db, gateway: { httpPort: 0, dnsServers: ['127.0.0.1:1'] }, clock, jobs: { enabled: false } });
  });
  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it('shows the order created last, and creates each after the one before', async () => {
    const hosts = ['m1.example.test', 'm2.example.test', 'm3.example.test', 'm4.example.test'];
    /** Orders a certificate for `host`, after failing its live order as a last failed attempt does. @returns the new order's id. */
    const reorder = async (host: string): Promise<string> => {
      await db
        .knex('gateway_orders')
        .where({ active_host: host })
        .update({ status: 'failed', active_host: null, finished_at: clock.at, last_error: 'attempt failed' });
      const issued = await t.gateway('/cert/issue', { host }, 'bridge');
      expect(issued.status, JSON.stringify(issued.body)).toBe(200);
      return issued.body.order_id as string;
    };
    const created: Record<string, string[]> = {};
    for (const host of hosts) {
      await seedHost(db, host, 'alice');
      // Two orders in one millisecond of a clock that stands still.
      created[host] = [await reorder(host), await reorder(host)];
    }
    // An NTP correction steps the clock back a minute.
    clock.at -= 60_000;
    for (const host of hosts) created[host]?.push(await reorder(host));

    const listed = (await t.gateway('/list', {}, 'bridge')).body.hosts as ListedHost[];
    expect(listed.map((host) => [host.host, host.cert_status, host.order?.order_id, host.order?.status])).toEqual(
      hosts.map((host) => [host, 'pending', created[host]?.[2], 'queued']),
    );
    for (const host of hosts) {
      const rows = (await db
        .knex('gateway_orders')
        .where({ host })
        .orderBy([
          { column: 'created_at', order: 'asc' },
          { column: 'order_id', order: 'asc' },
        ])) as Array<{ order_id: string; created_at: number | string }>;
      expect(rows.map((row) => row.order_id)).toEqual(created[host]);
      const times = rows.map((row) => Number(row.created_at));
      expect(times[1]).toBe((times[0] as number) + 1);
      expect(times[2]).toBe((times[1] as number) + 1);
    }
  });
});

// The daily sweep deletes finished orders 30 days after they ended, except each bound host's latest.
describe.each(sqlDatabases())('agent-gateway order retention on $name', ({ create }) => {
  let t: GatewayTestServer;
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    db = fixture.db;
    cleanup = fixture.cleanup;
    t = await startGatewayTestServer({ db, gateway: { httpPort: 0, dnsServers: ['127.0.0.1:1'] }, jobs: { enabled: false } });
  });
  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it('deletes superseded and released orders past retention, keeps every bound host’s latest', async () => {
    const daysAgo = (days: number) => Date.now() - days * 86_400_000;
    await seedHost(db, 'p.example.test', 'alice');
    await seedOrder(db, { host: 'p.example.test', agent: 'alice', orderId: 'ord_p1', status: 'valid', createdAt: daysAgo(40) });
    await seedOrder(db, { host: 'p.example.test', agent: 'alice', orderId: 'ord_p2', status: 'failed', createdAt: daysAgo(35) });
    await seedHost(db, 'q.example.test', 'alice');
    await seedOrder(db, { host: 'q.example.test', agent: 'alice', orderId: 'ord_q1', status: 'failed', createdAt: daysAgo(2) });
    await seedOrder(db, { host: 'q.example.test', agent: 'alice', orderId: 'ord_q2', status: 'valid', createdAt: daysAgo(1) });
    await seedHost(db, 'r.example.test', 'bob');
    await seedOrder(db, { host: 'r.example.test', agent: 'bob', orderId: 'ord_r0', status: 'cancelled', createdAt: daysAgo(45) });
    await seedOrder(db, { host: 'r.example.test', agent: 'bob', orderId: 'ord_r1', status: 'queued', createdAt: daysAgo(40) });
    // A binding that was released: nothing shows its orders any more.
    await seedOrder(db, {
      host: 's.example.test',
      agent: 'bob',
      orderId: 'ord_s1',
      status: 'valid',
      createdAt: daysAgo(31),
      hostId: 'hst_gone',
    });
    await seedOrder(db, {
      host: 's.example.test',
      agent: 'bob',
      orderId: 'ord_s2',
      status: 'failed',
      createdAt: daysAgo(3),
      hostId: 'hst_gone',
    });
    const before = (await t.gateway('/list', {}, 'bridge')).body.hosts.map((host: ListedHost) => host.order?.order_id);

    await t.service.sweep();

    const left = (await db.knex('gateway_orders').select('order_id').orderBy('order_id')).map((row: { order_id: string }) => row.order_id);
    expect(left).toEqual(['ord_p2', 'ord_q1', 'ord_q2', 'ord_r1', 'ord_s2']);
    expect((await t.gateway('/list', {}, 'bridge')).body.hosts.map((host: ListedHost) => host.order?.order_id)).toEqual(before);
  });
});
