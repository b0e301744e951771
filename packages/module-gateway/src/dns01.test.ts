import { newMasterKey, type SqlDatabase } from '@agentinfra/core';
import { keepOpen } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from './config.js';
import type { DnsProvider } from './dns01/dns-provider.js';
import { createRfc2136DnsProvider } from './dns01/rfc2136-provider.js';
import { acmeToolsAvailable } from './test-support/acme-tools.js';
import { expectChainToRoot } from './test-support/certificate-checks.js';
import { claimHost, startGatewayTestServer } from './test-support/gateway-test-server.js';
import { type KnotServer, startKnot } from './test-support/knot.js';
import { type PebbleServer, startPebble } from './test-support/pebble.js';
import { createTxtLookup } from './txt-lookup.js';

/**
 * DNS-01 end to end with real validation: the gateway publishes
 * `_acme-challenge` records in a Knot zone by RFC 2136 + TSIG, and pebble
 * validates by asking that Knot (`-dnsserver`). Host claims are proven
 * through the same Knot.
 */
const dns01AcmeToolsPresent = acmeToolsAvailable('DNS-01 through RFC 2136');
describe.runIf(dns01AcmeToolsPresent)('DNS-01 through RFC 2136 with real validation (issue #8)', () => {
  let knot: KnotServer;
  let pebble: PebbleServer;
  let dns: DnsProvider;

  // One Knot and one pebble for both engines (each engine's gateway registers its own account).
  beforeAll(async () => {
    knot = await startKnot({ zone: 'gw.test' });
    pebble = await startPebble({ alwaysValid: false, dnsServer: knot.server });
    dns = createRfc2136DnsProvider({ server: knot.server, keyName: knot.key.name, keySecret: knot.key.secret });
  });
  afterAll(async () => {
    await pebble?.stop();
    await knot?.stop();
  });

  describe.each(sqlDatabases())('on $name', ({ create }) => {
    let db: SqlDatabase;
    let cleanup: () => Promise<void>;
    let gateway: GatewayConfigInput;
    const masterKey = newMasterKey();
    const publish = (name: string, value: string) => dns.addTxt({ name, value });

    beforeAll(async () => {
      const fixture = await create();
      db = fixture.db;
      cleanup = fixture.cleanup;
      gateway = {
        directoryUrl: pebble.directoryUrl,
        caFile: pebble.caFile,
        challenge: 'dns-01',
        dnsServers: [knot.server],
        rfc2136: { server: knot.server, zone: 'gw.test', keyName: knot.key.name, keySecret: knot.key.secret },
        httpPort: 0,
        acmePollMinMs: 50,
        acmePollMaxMs: 500,
        acmePollAttempts: 40,
        dnsPropagationTimeoutMs: 5_000,
      };
    });
    afterAll(async () => {
      await cleanup?.();
    });

    it('proves the host, publishes the challenge by dynamic update, gets the certificate and removes the record', async () => {
      const test = await startGatewayTestServer({ db: keepOpen(db), gateway, masterKey });
      try {
        const host = 'api.gw.test';
        await claimHost(test, 'alice', host, publish);
        await test.gateway('/cert/issue', { host }, 'bridge');
        const entry = await test.waitForCert(host, ['valid', 'failed']);
        expect(entry.cert_status, JSON.stringify(entry)).toBe('valid');
        expect(entry.order.attempts).toBe(1);
        const got = await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice');
        expectChainToRoot({ chainPem: got.body.certificate_pem, rootPem: await pebble.root(), host, keyPem: got.body.private_key_pem });
        expect(await createTxtLookup({ servers: [knot.server] }).lookup(`_acme-challenge.${host}`)).toEqual({ ok: true, values: [] });
      } finally {
        await test.server.stop();
      }
    }, 90_000);

    it('resumes the same ACME order after a failed attempt and a restart', async () => {
      const outage: DnsProvider = {
        describe: () => 'outage',
        addTxt: async () => {
          throw new Error('simulated DNS outage');
        },
        removeTxt: async () => undefined,
      };
      const host = 'resume.gw.test';
      const first = await startGatewayTestServer({
        db: keepOpen(db),
        gateway,
        masterKey,
        extensions: { dnsProvider: outage },
        jobs: { enabled: false },
        agents: false,
      });
      let acmeOrderUrl: string;
      let orderId: string;
      try {
        await claimHost(first, 'bob', host, publish);
        const issued = await first.gateway('/cert/issue', { host }, 'bridge');
        orderId = issued.body.order_id;
        await expect(first.service.runOrder({ orderId, attempt: 1, signal: new AbortController().signal })).rejects.toThrow(
          /simulated DNS outage/,
        );
        const row = await db.knex('gateway_orders').where({ order_id: orderId }).first();
        expect(row).toMatchObject({ status: 'processing', attempts: 1, last_error: expect.stringMatching(/simulated DNS outage/) });
        expect(row.acme_order_url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\//);
        acmeOrderUrl = row.acme_order_url;
      } finally {
        await first.server.stop();
      }
      const second = await startGatewayTestServer({ db: keepOpen(db), gateway, masterKey, agents: false });
      try {
        const entry = await second.waitForCert(host, ['valid', 'failed']);
        expect(entry.cert_status, JSON.stringify(entry)).toBe('valid');
        const row = await db.knex('gateway_orders').where({ order_id: orderId }).first();
        expect(row).toMatchObject({ status: 'valid', acme_order_url: acmeOrderUrl, last_error: null });
        expect(await db.knex('gateway_accounts').count({ n: '*' })).toEqual([{ n: 1 }]);
      } finally {
        await second.server.stop();
      }
    }, 90_000);
  });
});
