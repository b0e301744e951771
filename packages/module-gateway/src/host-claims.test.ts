import type { SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeToolsAvailable } from './test-support/acme-tools.js';
import { type ChallTestServer, startChallTestServer } from './test-support/challtestsrv.js';
import {
  claimHost,
  type GatewayTestServer,
  startGatewayTestServer,
  type TestClock,
  testClock,
} from './test-support/gateway-test-server.js';

const DAY_MS = 86_400_000;

const acmeTools = acmeToolsAvailable('agent-gateway hosts over HTTP');
describe.runIf(acmeTools).each(sqlDatabases())('agent-gateway hosts over HTTP on $name (issue #8)', ({ name: engine, create }) => {
  let dns: ChallTestServer;
  let test: GatewayTestServer;
  let cleanup: () => Promise<void>;
  let clock: TestClock;
  let db: SqlDatabase;
  const publish = (name: string, value: string) => dns.setTxt(name, value);
  /** Cases whose outcome no SQL statement decides (input validation, credentials): on SQLite only. */
  const onSqliteOnly = it.runIf(engine === 'sqlite');

  beforeAll(async () => {
    dns = await startChallTestServer();
    const fixture = await create();
    cleanup = fixture.cleanup;
    db = fixture.db;
    clock = testClock();
    test = await startGatewayTestServer({
      db: fixture.db,
      clock,
      gateway: { dnsServers: [dns.dnsServer], httpPort: 0, directoryUrl: 'https://127.0.0.1:9/dir' },
    });
  });
  afterAll(async () => {
    await test?.server.stop();
    await cleanup?.();
    await dns?.stop();
  });

  it('hands out a TXT token first, then binds once the record resolves through the configured resolver', async () => {
    const first = await test.gateway('/host/claim', { agent_id: 'alice', host: 'app.alice.test' }, 'alice');
    expect(first.status).toBe(422);
    expect(first.body.error.code).toBe('verification_failed');
    const { record_name, record_value, expires_at } = first.body.error.details;
    expect(record_name).toBe('_agentinfra-challenge.app.alice.test');
    expect(record_value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(expires_at) - Date.now()).toBeGreaterThan(7 * DAY_MS - 60_000);
    const again = await test.gateway('/host/claim', { agent_id: 'alice', host: 'app.alice.test' }, 'alice');
    expect(again.status).toBe(422);
    expect(again.body.error.details.record_value).toBe(record_value);
    expect(again.body.error.message).toMatch(/No TXT record/);
    await dns.setTxt(record_name, record_value);
    const bound = await test.gateway('/host/claim', { agent_id: 'alice', host: 'app.alice.test' }, 'alice');
    expect(bound.status).toBe(200);
    expect(bound.body).toMatchObject({
      host: 'app.alice.test',
      agent_id: 'alice',
      status: 'bound',
      host_id: expect.stringMatching(/^hst_/),
    });
    const twice = await test.gateway('/host/claim', { agent_id: 'alice', host: 'APP.alice.test' }, 'alice');
    expect(twice.body).toEqual(bound.body);
  });

  it('refuses a wrong value, a missing record and another agent’s token', async () => {
    const host = 'contested.example.test';
    const alice = await test.gateway('/host/claim', { agent_id: 'alice', host }, 'alice');
    const bob = await test.gateway('/host/claim', { agent_id: 'bob', host }, 'bob');
    expect(alice.body.error.details.record_value).not.toBe(bob.body.error.details.record_value);
    const name = alice.body.error.details.record_name;
    const missing = await test.gateway('/host/claim', { agent_id: 'alice', host }, 'alice');
    expect(missing.status).toBe(422);
    expect(missing.body.error.details.found).toEqual([]);
    await dns.setTxt(name, 'not-the-token');
    const wrong = await test.gateway('/host/claim', { agent_id: 'alice', host }, 'alice');
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.message).toMatch(/does not hold this agent's token/);
    expect(wrong.body.error.details.found).toEqual(['not-the-token']);
    await dns.clearTxt(name);
    await dns.setTxt(name, bob.body.error.details.record_value);
    const othersToken = await test.gateway('/host/claim', { agent_id: 'alice', host }, 'alice');
    expect(othersToken.status).toBe(422);
    const bobBinds = await test.gateway('/host/claim', { agent_id: 'bob', host }, 'bob');
    expect(bobBinds.status).toBe(200);
    await dns.setTxt(name, alice.body.error.details.record_value);
    const taken = await test.gateway('/host/claim', { agent_id: 'alice', host }, 'alice');
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('conflict');
  });

  it('expires tokens (default 7 days) and hands out a new one', async () => {
    const host = 'slow.example.test';
    const first = await test.gateway('/host/claim', { agent_id: 'alice', host }, 'alice');
    await dns.setTxt(first.body.error.details.record_name, first.body.error.details.record_value);
    clock.offsetMs = 7 * DAY_MS + 1_000;
    try {
      const later = await test.gateway('/host/claim', { agent_id: 'alice', host }, 'alice');
      expect(later.status).toBe(422);
      expect(later.body.error.details.record_value).not.toBe(first.body.error.details.record_value);
    } finally {
      clock.offsetMs = 0;
    }
  });

  onSqliteOnly('accepts Unicode hostnames as IDNA and refuses malformed ones with 400', async () => {
    const unicode = await test.gateway('/host/claim', { agent_id: 'alice', host: 'Bücher.example.test' }, 'alice');
    expect(unicode.status).toBe(422);
    expect(unicode.body.error.details.record_name).toBe('_agentinfra-challenge.xn--bcher-kva.example.test');
    for (const host of [
      'has space.example.test',
      `${'a'.repeat(64)}.example.test`,
      '*.example.test',
      '1.2.3.4',
      'example.test.',
      'single',
      '',
    ]) {
      const response = await test.gateway('/host/claim', { agent_id: 'alice', host }, 'alice');
      expect(response.status, host).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect(response.body.error.details.fields[0].path).toBe('host');
    }
    const longHost = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(36)}.test`;
    expect(longHost.length).toBe(233);
    const tooLong = await test.gateway('/host/claim', { agent_id: 'alice', host: longHost }, 'alice');
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details.fields).toEqual([
      { path: 'host', message: expect.stringMatching(/^The hostname is longer than 231 octets, so its claim record/) },
    ]);
    const extra = await test.gateway('/host/claim', { agent_id: 'alice', host: 'x.example.test', port: 1 }, 'alice');
    expect(extra.status).toBe(400);
  });

  onSqliteOnly('refuses URL junk after a hostname on every host field instead of truncating it to a bound host', async () => {
    await claimHost(test, 'alice', 'victim.example.test', publish);
    for (const host of [
      'victim.example.test/path',
      'victim.example.test#evil',
      'victim.example.test?x=1',
      'victim.example.test\\evil',
      'victim.example.test:443',
      'vic\u00adtim.example.test',
    ]) {
      for (const [path, body, as] of [
        ['/host/claim', { agent_id: 'bob', host }, 'bob'],
        ['/host/release', { agent_id: 'alice', host }, 'alice'],
        ['/ip/report', { host, ips: ['192.0.2.9'] }, 'bridge'],
        ['/cert/issue', { host }, 'bridge'],
      ] as const) {
        const response = await test.gateway(path, body, as);
        expect(response.status, `${path} ${host}`).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
        expect(response.body.error.details.fields).toEqual([{ path: 'host', message: expect.stringMatching(/^The hostname contains /) }]);
      }
    }
    const listed = await test.gateway('/list', { agent_id: 'alice' }, 'bridge');
    expect(listed.body.hosts.find((entry: { host: string }) => entry.host === 'victim.example.test')).toMatchObject({ ips: [] });
  });

  it('records IP addresses: validated, normalised, deduplicated, replacing the set', async () => {
    await claimHost(test, 'alice', 'ips.example.test', publish);
    const reported = await test.gateway(
      '/ip/report',
      { host: 'ips.example.test', ips: ['2001:DB8::1', '192.0.2.7', '2001:db8:0::1'] },
      'bridge',
    );
    expect(reported.status).toBe(200);
    expect(reported.body).toEqual({ host: 'ips.example.test', ips: ['192.0.2.7', '2001:db8::1'] });
    const replaced = await test.gateway('/ip/report', { host: 'ips.example.test', ips: ['198.51.100.1'] }, 'bridge');
    expect(replaced.body.ips).toEqual(['198.51.100.1']);
    for (const ip of ['999.1.1.1', '::g', '1.2.3', 'fe80::1%eth0']) {
      const bad = await test.gateway('/ip/report', { host: 'ips.example.test', ips: ['10.0.0.1', ip] }, 'bridge');
      expect(bad.status, ip).toBe(400);
      expect(bad.body.error.details.fields[0].path).toBe('ips.1');
    }
    const unbound = await test.gateway('/ip/report', { host: 'nobody.example.test', ips: [] }, 'bridge');
    expect(unbound.status).toBe(404);
    const listed = await test.gateway('/list', {}, 'bridge');
    expect(listed.body.hosts.find((entry: { host: string }) => entry.host === 'ips.example.test')).toMatchObject({
      agent_id: 'alice',
      ips: ['198.51.100.1'],
      cert_expires_at: null,
      days_remaining: null,
      cert_status: 'none',
      order: null,
    });
  });

  it('lists hosts (all, or one agent’s) and releases only the owner’s', async () => {
    await claimHost(test, 'bob', 'bob.example.test', publish);
    const all = await test.gateway('/list', {}, 'bridge');
    const hosts = all.body.hosts.map((entry: { host: string }) => entry.host);
    expect(hosts).toEqual([...hosts].sort());
    expect(hosts).toEqual(expect.arrayContaining(['app.alice.test', 'bob.example.test']));
    const bobs = await test.gateway('/list', { agent_id: 'bob' }, 'bridge');
    expect(bobs.body.hosts.every((entry: { agent_id: string }) => entry.agent_id === 'bob')).toBe(true);
    const notOwner = await test.gateway('/host/release', { agent_id: 'alice', host: 'bob.example.test' }, 'alice');
    expect(notOwner.status).toBe(404);
    const released = await test.gateway('/host/release', { agent_id: 'bob', host: 'bob.example.test' }, 'bob');
    expect(released.status).toBe(200);
    expect(released.body).toEqual({ host: 'bob.example.test', released_at: expect.any(String), certificate_revocation: 'none' });
    const gone = await test.gateway('/list', { agent_id: 'bob' }, 'bridge');
    expect(gone.body.hosts.map((entry: { host: string }) => entry.host)).not.toContain('bob.example.test');
    const twice = await test.gateway('/host/release', { agent_id: 'bob', host: 'bob.example.test' }, 'bob');
    expect(twice.status).toBe(404);
  });

  onSqliteOnly('enforces credentials: 401 without, 403 for another agent, bridge-only service operations', async () => {
    expect((await test.gateway('/host/claim', { agent_id: 'alice', host: 'a.example.test' }, {})).status).toBe(401);
    expect((await test.gateway('/host/claim', { agent_id: 'alice', host: 'a.example.test' }, { credential: 'dk_unknown' })).status).toBe(
      401,
    );
    expect((await test.gateway('/host/claim', { agent_id: 'alice', host: 'a.example.test' }, 'bob')).status).toBe(403);
    expect((await test.gateway('/host/claim', { agent_id: 'alice', host: 'a.example.test' }, 'bridge')).status).toBe(422);
    for (const [path, body] of [
      ['/list', {}],
      ['/ip/report', { host: 'app.alice.test', ips: [] }],
      ['/cert/issue', { host: 'app.alice.test' }],
      ['/cert/renew', {}],
    ] as const) {
      expect((await test.gateway(path, body, 'alice')).status, path).toBe(403);
    }
    expect((await test.gateway('/cert/get', { agent_id: 'alice', host: 'app.alice.test' }, 'bob')).status).toBe(403);
    const method = await test.server.call('agent-gateway/list', undefined, { credential: test.server.bridgeKey, method: 'GET' });
    expect(method.status).toBe(405);
  });

  it('answers 404 for certificates of unbound hosts or hosts without one', async () => {
    expect((await test.gateway('/cert/issue', { host: 'unbound.example.test' }, 'bridge')).status).toBe(404);
    expect((await test.gateway('/cert/renew', { host: 'unbound.example.test' }, 'bridge')).status).toBe(404);
    expect((await test.gateway('/cert/get', { agent_id: 'alice', host: 'app.alice.test' }, 'alice')).status).toBe(404);
    expect((await test.gateway('/cert/renew', {}, 'bridge')).body).toEqual({ orders: [] });
  });

  it('hands concurrent first claims of one host the same token, even one short of the quota', async () => {
    const setQuota = (value: number) =>
      test.server.call('agent-identity/settings/set', { key: 'gateway_max_hosts_per_agent', value }, { credential: test.server.bridgeKey });
    const held =
      Number(
        (
          (await db
            .knex('gateway_claims')
            .where({ agent_id: 'alice' })
            .andWhere('expires_at', '>', clock.now())
            .count({ n: '*' })
            .first()) as {
            n: number | string;
          }
        ).n,
      ) + Number(((await db.knex('gateway_hosts').where({ agent_id: 'alice' }).count({ n: '*' }).first()) as { n: number | string }).n);
    expect((await setQuota(held + 1)).status).toBe(200);
    try {
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => test.gateway('/host/claim', { agent_id: 'alice', host: 'race.alice.test' }, 'alice')),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(422));
      const tokens = new Set(answers.map((answer) => answer.body.error.details.record_value));
      expect(tokens.size).toBe(1);
      const stored = await db.knex('gateway_claims').where({ agent_id: 'alice', host: 'race.alice.test' }).first();
      expect(tokens.has(stored.token)).toBe(true);
    } finally {
      expect((await setQuota(100)).status).toBe(200);
    }
  });

  it('never keeps a claim stored beside a binding made a moment earlier (another agent claiming while the owner binds)', async () => {
    const hosts = Array.from({ length: 24 }, (_, i) => `bind-race-${i}.alice.test`);
    for (const host of hosts) {
      const first = await test.gateway('/host/claim', { agent_id: 'alice', host }, 'alice');
      await publish(first.body.error.details.record_name, first.body.error.details.record_value);
    }
    await Promise.all(
      hosts.map(async (host, i) => {
        const binding = test.gateway('/host/claim', { agent_id: 'alice', host }, 'alice');
        await new Promise((resolve) => setTimeout(resolve, i % 8));
        const other = await test.gateway('/host/claim', { agent_id: 'bob', host }, 'bob');
        expect([409, 422]).toContain(other.status);
        expect((await binding).status).toBe(200);
      }),
    );
    // A claim of bob's stored after alice's binding would hold a place in bob's quota for a week.
    expect(await db.knex('gateway_claims').whereIn('host', hosts)).toEqual([]);
    expect((await test.gateway('/host/claim', { agent_id: 'bob', host: hosts[0] }, 'bob')).status).toBe(409);
  });

  it("refuses a claim of another host past the agent's quota of bound and claimed hosts", async () => {
    const setQuota = (value: number) =>
      test.server.call('agent-identity/settings/set', { key: 'gateway_max_hosts_per_agent', value }, { credential: test.server.bridgeKey });
    const counted = async (table: string, extra: (query: ReturnType<typeof db.knex>) => unknown = () => undefined) => {
      const query = db.knex(table).where({ agent_id: 'bob' });
      extra(query);
      return Number(((await query.count({ n: '*' }).first()) as { n: number | string }).n);
    };
    const held =
      (await counted('gateway_hosts')) + (await counted('gateway_claims', (query) => query.andWhere('expires_at', '>', clock.now())));
    expect((await setQuota(held + 1)).status).toBe(200);
    try {
      expect((await test.gateway('/host/claim', { agent_id: 'bob', host: 'quota-a.bob.test' }, 'bob')).status).toBe(422);
      const over = await test.gateway('/host/claim', { agent_id: 'bob', host: 'quota-b.bob.test' }, 'bob');
      expect(over.status).toBe(409);
      expect(over.body.error).toMatchObject({
        message: expect.stringContaining('gateway_max_hosts_per_agent'),
        details: { quota: held + 1, used: held + 1 },
      });
      // The claim being made counts; asking for its token again is not a new host.
      expect((await test.gateway('/host/claim', { agent_id: 'bob', host: 'quota-a.bob.test' }, 'bob')).status).toBe(422);

      // Once quota-a's token expired it no longer counts, and claiming it again takes room like a new host.
      const offset = clock.offsetMs;
      clock.offsetMs += 8 * DAY_MS;
      try {
        const later =
          (await counted('gateway_hosts')) + (await counted('gateway_claims', (query) => query.andWhere('expires_at', '>', clock.now())));
        expect((await setQuota(later + 1)).status).toBe(200);
        expect((await test.gateway('/host/claim', { agent_id: 'bob', host: 'quota-b.bob.test' }, 'bob')).status).toBe(422);
        expect((await test.gateway('/host/claim', { agent_id: 'bob', host: 'quota-a.bob.test' }, 'bob')).status).toBe(409);
      } finally {
        clock.offsetMs = offset;
      }
    } finally {
      expect((await setQuota(100)).status).toBe(200);
    }
  });
});
