import { randomBytes } from 'node:crypto';
import type { SqlDatabase } from '@agentinfra/core';
import { embeddedDatabase, sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeToolsAvailable } from './test-support/acme-tools.js';
import { expectChainToRoot } from './test-support/certificate-checks.js';
import { type ChallTestServer, startChallTestServer } from './test-support/challtestsrv.js';
import { freeTcpPort } from './test-support/free-port.js';
import { claimHost, type GatewayTestServer, startGatewayTestServer } from './test-support/gateway-test-server.js';
import { type PebbleServer, startPebble } from './test-support/pebble.js';

const fastPolling = { acmePollMinMs: 50, acmePollMaxMs: 500, acmePollAttempts: 40 };

const http01Tools = acmeToolsAvailable('HTTP-01 with real validation');
// One pebble for both engines: it validates on one port, which each engine's gateway listens on in turn.
describe.runIf(http01Tools)('HTTP-01 with real validation (issue #8)', () => {
  let dns: ChallTestServer;
  let pebble: PebbleServer;
  let httpPort: number;
  const publish = (name: string, value: string) => dns.setTxt(name, value);

  beforeAll(async () => {
    dns = await startChallTestServer();
    httpPort = await freeTcpPort();
    pebble = await startPebble({ alwaysValid: false, dnsServer: dns.dnsServer, httpPort });
  });
  afterAll(async () => {
    await pebble?.stop();
    await dns?.stop();
  });

  describe.each(sqlDatabases())('on $name', ({ create }) => {
    let test: GatewayTestServer;
    let db: SqlDatabase;
    let cleanup: () => Promise<void>;

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
          challenge: 'http-01',
          httpPort,
          httpHost: '127.0.0.1',
          orderMaxAttempts: 2,
          ...fastPolling,
        },
      });
    });
    afterAll(async () => {
      await test?.server.stop();
      await cleanup?.();
    });

    it('gets a certificate after pebble fetched the key authorization from the gateway’s own listener', async () => {
      expect(test.service.http01Port()).toBe(httpPort);
      const host = 'web.http01.test';
      await claimHost(test, 'alice', host, publish);
      await test.gateway('/cert/issue', { host }, 'bridge');
      const entry = await test.waitForCert(host, ['valid', 'failed']);
      expect(entry.cert_status, JSON.stringify(entry)).toBe('valid');
      expect(entry.order.attempts).toBe(1);
      const got = await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice');
      expectChainToRoot({ chainPem: got.body.certificate_pem, rootPem: await pebble.root(), host, keyPem: got.body.private_key_pem });
      expect(await db.knex('gateway_http_tokens').select()).toEqual([]);
    }, 90_000);

    it('records the CA’s problem document when validation fails, retries, then fails the order', async () => {
      const host = 'unreachable.http01.test';
      await claimHost(test, 'alice', host, publish);
      await dns.setA(host, ['127.0.0.2']);
      await test.gateway('/cert/issue', { host }, 'bridge');
      const entry = await test.waitForCert(host, ['failed', 'valid']);
      expect(entry.cert_status).toBe('failed');
      expect(entry.order).toMatchObject({ status: 'failed', attempts: 2 });
      expect(entry.order.problem).toMatchObject({ type: 'urn:ietf:params:acme:error:connection', status: 400 });
      expect(entry.order.error).toMatch(/http-01 challenge .* failed/);
      const retried = await test.gateway('/cert/issue', { host }, 'bridge');
      expect(retried.body.order_id).not.toBe(entry.order.order_id);
      // Let the new order finish too, so that no order is still running when the server stops.
      let last: { order_id: string; status: string } | undefined;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
        const listed = await test.gateway('/list', {}, 'bridge');
        last = listed.body.hosts?.find((candidate: { host: string }) => candidate.host === host)?.order;
        if (last !== undefined && last.order_id === retried.body.order_id && ['failed', 'valid'].includes(last.status)) break;
      }
      expect(last).toMatchObject({ order_id: retried.body.order_id, status: 'failed' });
    }, 120_000);

    it('answers only GET/HEAD of known tokens on the challenge listener', async () => {
      const base = `http://127.0.0.1:${httpPort}/.well-known/acme-challenge`;
      const token = randomBytes(32).toString('base64url');
      expect((await fetch(`${base}/${token}`)).status).toBe(404);
      await db
        .knex('gateway_http_tokens')
        .insert({ token, key_authorization: `${token}.thumbprint`, order_id: 'ord_test', expires_at: Date.now() + 60_000 });
      const found = await fetch(`${base}/${token}`);
      expect(found.status).toBe(200);
      expect(found.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await found.text()).toBe(`${token}.thumbprint`);
      expect((await fetch(`${base}/${token}`, { method: 'POST' })).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${httpPort}/other`)).status).toBe(404);
      await db.knex('gateway_http_tokens').where({ token }).delete();
      // Review: an expired token stayed servable until the daily sweep deleted it.
      const expired = randomBytes(32).toString('base64url');
      await db
        .knex('gateway_http_tokens')
        .insert({ token: expired, key_authorization: `${expired}.thumbprint`, order_id: 'ord_test', expires_at: Date.now() - 1 });
      expect((await fetch(`${base}/${expired}`)).status).toBe(404);
      await db.knex('gateway_http_tokens').where({ token: expired }).delete();
    }, 90_000);
  });
});

// On SQLite only: registration with EAB is ACME logic, and the account row it stores is what every issuing test stores on both engines.
const eabTools = acmeToolsAvailable('External Account Binding');
describe.runIf(eabTools).each(embeddedDatabase())('External Account Binding on $name (issue #8)', ({ create }) => {
  let dns: ChallTestServer;
  let pebble: PebbleServer;
  const hmacKey = randomBytes(32).toString('base64url');
  const publish = (name: string, value: string) => dns.setTxt(name, value);

  beforeAll(async () => {
    dns = await startChallTestServer();
    pebble = await startPebble({ alwaysValid: true, dnsServer: dns.dnsServer, eabKeys: { 'kid-1': hmacKey } });
  });
  afterAll(async () => {
    await pebble?.stop();
    await dns?.stop();
  });

  const withServer = async (eab: { kid: string; hmacKey: string } | undefined, body: (test: GatewayTestServer) => Promise<void>) => {
    const fixture = await create();
    const test = await startGatewayTestServer({
      db: fixture.db,
      gateway: {
        directoryUrl: pebble.directoryUrl,
        caFile: pebble.caFile,
        dnsServers: [dns.dnsServer],
        httpPort: 0,
        ...(eab ? { eab } : {}),
        ...fastPolling,
      },
    });
    try {
      await body(test);
    } finally {
      await test.server.stop();
      await fixture.cleanup();
    }
  };

  it('registers the account with the CA’s key id and HMAC key, and issues', async () => {
    await withServer({ kid: 'kid-1', hmacKey }, async (test) => {
      await claimHost(test, 'alice', 'eab.example.test', publish);
      await test.gateway('/cert/issue', { host: 'eab.example.test' }, 'bridge');
      expect((await test.waitForCert('eab.example.test', ['valid', 'failed'])).cert_status).toBe('valid');
    });
  }, 90_000);

  it('fails the order at once with the problem document when the CA requires EAB and none is set', async () => {
    await withServer(undefined, async (test) => {
      await claimHost(test, 'alice', 'noeab.example.test', publish);
      await test.gateway('/cert/issue', { host: 'noeab.example.test' }, 'bridge');
      const entry = await test.waitForCert('noeab.example.test', ['failed', 'valid']);
      expect(entry.order).toMatchObject({ status: 'failed', attempts: 1 });
      expect(entry.order.problem.type).toBe('urn:ietf:params:acme:error:externalAccountRequired');
    });
  }, 90_000);
});
