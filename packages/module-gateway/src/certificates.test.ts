import { createPrivateKey } from 'node:crypto';
import type { SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RENEW_DUE_JOB } from './gateway-context.js';
import { gatewayJobs } from './jobs/gateway-jobs.js';
import { acmeToolsAvailable } from './test-support/acme-tools.js';
import { expectChainToRoot, serialOf } from './test-support/certificate-checks.js';
import { type ChallTestServer, startChallTestServer } from './test-support/challtestsrv.js';
import { claimHost, type GatewayTestServer, startGatewayTestServer } from './test-support/gateway-test-server.js';
import { type PebbleServer, startPebble } from './test-support/pebble.js';

const DAY_MS = 86_400_000;
const fastPolling = { acmePollMinMs: 50, acmePollMaxMs: 500, acmePollAttempts: 40 };

const acmeTools = acmeToolsAvailable('agent-gateway certificates against pebble');
describe.runIf(acmeTools)('agent-gateway certificates against pebble (always valid) (issue #8)', () => {
  let dns: ChallTestServer;
  let pebble: PebbleServer;

  beforeAll(async () => {
    dns = await startChallTestServer();
    pebble = await startPebble({ alwaysValid: true, dnsServer: dns.dnsServer });
  });
  afterAll(async () => {
    await pebble?.stop();
    await dns?.stop();
  });

  describe.each(sqlDatabases())('on $name', ({ create }) => {
    let test: GatewayTestServer;
    let db: SqlDatabase;
    let cleanup: () => Promise<void>;
    const publish = (name: string, value: string) => dns.setTxt(name, value);

    beforeAll(async () => {
      const fixture = await create();
      db = fixture.db;
      cleanup = fixture.cleanup;
      test = await startGatewayTestServer({
        db,
        gateway: {
          directoryUrl: pebble.directoryUrl,
          caFile: pebble.caFile,
          dnsServers: [dns.dnsServer],
          httpPort: 0,
          email: 'ops@example.test',
          ...fastPolling,
        },
      });
    });
    afterAll(async () => {
      await test?.server.stop();
      await cleanup?.();
    });

    it('issues a certificate that chains to pebble’s root, matches the host, and whose notAfter /list reports', async () => {
      const host = 'www.example.test';
      await claimHost(test, 'alice', host, publish);
      const issued = await test.gateway('/cert/issue', { host }, 'bridge');
      expect(issued.status).toBe(200);
      expect(issued.body).toEqual({ host, order_id: expect.stringMatching(/^ord_/), status: 'queued' });
      const again = await test.gateway('/cert/issue', { host }, 'bridge');
      expect(again.body.order_id).toBe(issued.body.order_id);
      const entry = await test.waitForCert(host, ['valid', 'failed']);
      expect(entry.cert_status, JSON.stringify(entry)).toBe('valid');
      // issue #8: a finished order takes one attempt (the order URL must survive every poll, or finalization fails and is retried).
      expect(entry.order).toMatchObject({ order_id: issued.body.order_id, status: 'valid', attempts: 1, error: null, problem: null });

      const got = await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice');
      expect(got.status).toBe(200);
      const leaf = expectChainToRoot({
        chainPem: got.body.certificate_pem,
        rootPem: await pebble.root(),
        host,
        keyPem: got.body.private_key_pem,
      });
      expect(entry.cert_expires_at).toBe(new Date(leaf.validTo).toISOString());
      expect(got.body.not_after).toBe(entry.cert_expires_at);
      expect(entry.days_remaining).toBe(Math.floor((Date.parse(entry.cert_expires_at) - Date.now()) / DAY_MS));
      expect(got.body.serial).toBe(serialOf(leaf));
      const key = createPrivateKey(got.body.private_key_pem);
      expect(key.asymmetricKeyType).toBe('ec');
      expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');

      const stored = JSON.stringify(await db.knex('gateway_certificates').select());
      expect(stored).not.toContain('PRIVATE KEY');
      expect(JSON.stringify(await db.knex('gateway_accounts').select())).not.toContain('PRIVATE KEY');
      const listed = JSON.stringify((await test.gateway('/list', {}, 'bridge')).body);
      expect(listed).not.toContain('PRIVATE KEY');
      expect((await test.gateway('/cert/get', { agent_id: 'bob', host }, 'bob')).status).toBe(404);
    }, 90_000);

    it('renews a host on request and replaces its certificate', async () => {
      const host = 'renew.example.test';
      await claimHost(test, 'alice', host, publish);
      await test.gateway('/cert/issue', { host }, 'bridge');
      const first = await test.waitForCert(host, ['valid', 'failed']);
      const renewed = await test.gateway('/cert/renew', { host }, 'bridge');
      expect(renewed.status).toBe(200);
      expect(renewed.body.orders).toEqual([{ host, order_id: expect.stringMatching(/^ord_/), status: 'queued' }]);
      await expect
        .poll(
          async () => (await test.gateway('/list', {}, 'bridge')).body.hosts.find((e: { host: string }) => e.host === host).cert_serial,
          { timeout: 20_000 },
        )
        .not.toBe(first.cert_serial);
      const second = await test.waitForCert(host, ['valid']);
      expect(second.order.order_id).toBe(renewed.body.orders[0].order_id);
      const got = await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice');
      expectChainToRoot({ chainPem: got.body.certificate_pem, rootPem: await pebble.root(), host, keyPem: got.body.private_key_pem });
      expect(await db.knex('gateway_certificates').where({ host }).count({ n: '*' })).toEqual([{ n: 1 }]);
    }, 90_000);

    it('the daily job renews exactly the certificates with less than a third of their lifetime left', async () => {
      const host = 'due.example.test';
      await claimHost(test, 'alice', host, publish);
      await test.gateway('/cert/issue', { host }, 'bridge');
      const before = await test.waitForCert(host, ['valid']);
      expect((await test.gateway('/cert/renew', {}, 'bridge')).body).toEqual({ orders: [] });
      // Move the stored validity window instead of the clock (a moved clock would also expire the test's device keys).
      const lifetime = 90 * DAY_MS;
      const place = (notAfter: number) =>
        db
          .knex('gateway_certificates')
          .where({ host })
          .update({ not_after: notAfter, not_before: notAfter - lifetime });
      await place(Date.now() + lifetime / 3 + 60_000);
      expect((await test.gateway('/cert/renew', {}, 'bridge')).body.orders.map((order: { host: string }) => order.host)).not.toContain(
        host,
      );
      await place(Date.now() + lifetime / 3 - 60_000);
      const renewDue = gatewayJobs.find((job) => job.name === RENEW_DUE_JOB);
      await renewDue?.run({ payload: null, attempt: 1, scheduledFor: null, signal: new AbortController().signal, service: test.service });
      const order = await db.knex('gateway_orders').where({ host, reason: 'renew' }).first();
      expect(order).toBeDefined();
      await expect
        .poll(async () => (await db.knex('gateway_orders').where({ order_id: order.order_id }).first()).status, { timeout: 20_000 })
        .toBe('valid');
      const after = await test.waitForCert(host, ['valid']);
      expect(after.cert_serial).not.toBe(before.cert_serial);
    }, 90_000);

    it('revokes the certificate at the CA when the host is released', async () => {
      const host = 'release.example.test';
      await claimHost(test, 'alice', host, publish);
      await test.gateway('/cert/issue', { host }, 'bridge');
      const entry = await test.waitForCert(host, ['valid']);
      expect((await pebble.certStatus(entry.cert_serial))?.Status).toBe('Valid');
      const released = await test.gateway('/host/release', { agent_id: 'alice', host }, 'alice');
      expect(released.body.certificate_revocation).toBe('scheduled');
      await expect.poll(async () => (await pebble.certStatus(entry.cert_serial))?.Status, { timeout: 20_000 }).toBe('Revoked');
      expect((await pebble.certStatus(entry.cert_serial))?.Reason).toBe(5);
      await expect
        .poll(async () => (await db.knex('gateway_revocations').where({ serial: entry.cert_serial }).first()).status, { timeout: 5_000 })
        .toBe('revoked');
      expect((await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice')).status).toBe(404);
      expect((await test.gateway('/cert/issue', { host }, 'bridge')).status).toBe(404);
    }, 90_000);

    it('issues for many hosts at once, one order per host', async () => {
      const hosts = Array.from({ length: 6 }, (_, i) => `multi${i}.example.test`);
      for (const host of hosts) await claimHost(test, 'bob', host, publish);
      const orders = await Promise.all(hosts.map((host) => test.gateway('/cert/issue', { host }, 'bridge')));
      expect(new Set(orders.map((order) => order.body.order_id)).size).toBe(hosts.length);
      for (const host of hosts) expect((await test.waitForCert(host, ['valid', 'failed'])).cert_status).toBe('valid');
      const accounts = await db.knex('gateway_accounts').select('directory_url');
      expect(accounts).toEqual([{ directory_url: pebble.directoryUrl }]);
    }, 90_000);
  });
});
