import { createAesGcmSecretBox, newMasterKey, type SqlDatabase } from '@agentinfra/core';
import { keepOpen } from '@agentinfra/core/testing';
import { beforeFirstTransaction, sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from './config.js';
import { RESEAL_JOB } from './gateway-context.js';
import { accountKeyContext, certificateKeyContext } from './gateway-rows.js';
import { gatewayJobs } from './jobs/gateway-jobs.js';
import { createKeyReseal } from './key-reseal.js';
import { pebbleRequests } from './test-support/acme-proxy.js';
import { acmeToolsAvailable } from './test-support/acme-tools.js';
import { expectChainToRoot } from './test-support/certificate-checks.js';
import { claimHost, type GatewayTestServer, startGatewayTestServer } from './test-support/gateway-test-server.js';
import { usePebbleStack } from './test-support/pebble-stack.js';

const fastPolling = { acmePollMinMs: 50, acmePollMaxMs: 500, acmePollAttempts: 40 };
const running = () => new AbortController().signal;
const UNAUTHORIZED = { type: 'urn:ietf:params:acme:error:unauthorized', detail: 'refused for now', status: 403 };

/** Every sealed key of the gateway, by table and row. */
async function sealedKeys(db: SqlDatabase): Promise<Array<{ table: string; id: string; context: string; key_sealed: string }>> {
  const accounts = (await db.knex('gateway_accounts').select('directory_url', 'key_sealed')) as Array<Record<string, string>>;
  const orders = (await db.knex('gateway_orders').whereNotNull('key_sealed').select('order_id', 'key_sealed')) as Array<
    Record<string, string>
  >;
  const certificates = (await db.knex('gateway_certificates').select('host', 'order_id', 'key_sealed')) as Array<Record<string, string>>;
  const revocations = (await db
    .knex('gateway_revocations')
    .whereNotNull('key_sealed')
    .select('revocation_id', 'order_id', 'key_sealed')) as Array<Record<string, string>>;
  return [
    ...accounts.map((row) => ({
      table: 'gateway_accounts',
      id: row.directory_url as string,
      context: accountKeyContext(row.directory_url as string),
      key_sealed: row.key_sealed as string,
    })),
    ...orders.map((row) => ({
      table: 'gateway_orders',
      id: row.order_id as string,
      context: certificateKeyContext(row.order_id as string),
      key_sealed: row.key_sealed as string,
    })),
    ...certificates.map((row) => ({
      table: 'gateway_certificates',
      id: row.host as string,
      context: certificateKeyContext(row.order_id as string),
      key_sealed: row.key_sealed as string,
    })),
    ...revocations.map((row) => ({
      table: 'gateway_revocations',
      id: row.revocation_id as string,
      context: certificateKeyContext(row.order_id as string),
      key_sealed: row.key_sealed as string,
    })),
  ];
}

/**
 * Master-key rotation for the gateway's private keys: sealed under key v1,
 * resealed by the `gateway.reseal-keys` job on a server with v2 current and
 * v1 previous, then used by a server that has only v2.
 */
const acmeTools = acmeToolsAvailable('agent-gateway master key rotation');
describe.runIf(acmeTools)('agent-gateway master key rotation', () => {
  const stack = usePebbleStack();

  describe.each(sqlDatabases())('on $name', ({ create }) => {
    const publish = (name: string, value: string) => stack.dns.setTxt(name, value);
    const gateway = (): GatewayConfigInput => ({
      directoryUrl: stack.proxy.directoryUrl,
      caFile: stack.pebble.caFile,
      dnsServers: [stack.dns.dnsServer],
      httpPort: 0,
      ...fastPolling,
    });
    const start = (db: SqlDatabase, keys: { masterKey: string; previousMasterKeys?: string[] }, agents = false) =>
      startGatewayTestServer({ db: keepOpen(db), gateway: gateway(), jobs: { enabled: false }, agents, ...keys });
    const orderFor = async (test: GatewayTestServer, host: string): Promise<string> => {
      await claimHost(test, 'alice', host, publish);
      return (await test.gateway('/cert/issue', { host }, 'bridge')).body.order_id as string;
    };
    const certificateOf = async (test: GatewayTestServer, host: string) => {
      const got = await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice');
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expectChainToRoot({ chainPem: got.body.certificate_pem, rootPem: await stack.pebble.root(), host, keyPem: got.body.private_key_pem });
      return got.body as { certificate_pem: string; private_key_pem: string; serial: string };
    };

    it('reseals the account, order, certificate and pending revocation keys; with only the new key the gateway serves the certificate and goes on with the account and the order', async () => {
      const { db, cleanup } = await create();
      const [oldKey, newKey] = [newMasterKey(), newMasterKey()];
      const old = createAesGcmSecretBox({ masterKey: oldKey });
      const orderKeyOf = async (orderId: string) => {
        const row = await db.knex('gateway_orders').where({ order_id: orderId }).first();
        return old.open({ sealed: row.key_sealed, context: certificateKeyContext(orderId) });
      };
      try {
        const first = await start(db, { masterKey: oldKey }, true);
        await first.service.runOrder({ orderId: await orderFor(first, 'served.example.test'), attempt: 1, signal: running() });
        const served = await certificateOf(first, 'served.example.test');
        // Two orders stopped after their certificate key was sealed: the CA refused the first finalization.
        const pending = {} as Record<'during' | 'after', { orderId: string; keyPem: string }>;
        for (const when of ['during', 'after'] as const) {
          const orderId = await orderFor(first, `${when}.example.test`);
          stack.proxy.failNext(pebbleRequests.finalize, UNAUTHORIZED);
          await expect(first.service.runOrder({ orderId, attempt: 1, signal: running() })).rejects.toThrow(/refused for now/);
          pending[when] = { orderId, keyPem: await orderKeyOf(orderId) };
        }
        // A released host whose revocation has not run yet keeps its certificate key for it.
        await first.service.runOrder({ orderId: await orderFor(first, 'released.example.test'), attempt: 1, signal: running() });
        const released = await certificateOf(first, 'released.example.test');
        await first.gateway('/host/release', { agent_id: 'alice', host: 'released.example.test' }, 'alice');
        const [account] = await db.knex('gateway_accounts').select('account_url');
        await first.server.stop();
        const rotatedBox = createAesGcmSecretBox({ masterKey: newKey, previousMasterKeys: [oldKey] });
        expect((await sealedKeys(db)).map((row) => [row.table, rotatedBox.needsReseal(row.key_sealed)])).toEqual([
          ['gateway_accounts', true],
          ['gateway_orders', true],
          ['gateway_orders', true],
          ['gateway_certificates', true],
          ['gateway_revocations', true],
        ]);

        const rotated = await start(db, { masterKey: newKey, previousMasterKeys: [oldKey] });
        // An order finishing during the rotation stores its key resealed, whatever the job has done yet.
        await rotated.service.runOrder({ orderId: pending.during.orderId, attempt: 2, signal: running() });
        const during = await db.knex('gateway_certificates').where({ host: 'during.example.test' }).first();
        expect(rotatedBox.needsReseal(during.key_sealed)).toBe(false);
        expect((await certificateOf(rotated, 'during.example.test')).private_key_pem).toBe(pending.during.keyPem);

        const job = gatewayJobs.find((candidate) => candidate.name === RESEAL_JOB);
        expect(job?.schedule).toEqual({ every: 3_600_000 });
        await job?.run({ payload: null, attempt: 1, scheduledFor: null, signal: running(), service: rotated.service });
        expect((await sealedKeys(db)).filter((row) => rotatedBox.needsReseal(row.key_sealed))).toEqual([]);
        expect(await rotated.service.resealKeys()).toEqual({ accounts: 0, orders: 0, certificates: 0, revocations: 0 });
        await rotated.server.stop();

        const newOnly = await start(db, { masterKey: newKey });
        expect(await certificateOf(newOnly, 'served.example.test')).toMatchObject({
          certificate_pem: served.certificate_pem,
          private_key_pem: served.private_key_pem,
        });
        const [revocation] = await sealedKeys(db).then((rows) => rows.filter((row) => row.table === 'gateway_revocations'));
        const newOnlyBox = createAesGcmSecretBox({ masterKey: newKey });
        expect(newOnlyBox.open({ sealed: revocation?.key_sealed ?? '', context: revocation?.context ?? '' })).toBe(
          released.private_key_pem,
        );
        await newOnly.service.runOrder({ orderId: pending.after.orderId, attempt: 2, signal: running() });
        expect(await db.knex('gateway_orders').where({ order_id: pending.after.orderId }).first()).toMatchObject({ status: 'valid' });
        expect((await certificateOf(newOnly, 'after.example.test')).private_key_pem).toBe(pending.after.keyPem);
        expect(await db.knex('gateway_accounts').select('account_url')).toEqual([account]);
        await newOnly.server.stop();
      } finally {
        await cleanup();
      }
    }, 90_000);

    it('keeps a certificate renewed after the reseal read the old one', async () => {
      const { db, cleanup } = await create();
      const [oldKey, newKey] = [newMasterKey(), newMasterKey()];
      const host = 'renewed.example.test';
      try {
        const first = await start(db, { masterKey: oldKey }, true);
        await first.service.runOrder({ orderId: await orderFor(first, host), attempt: 1, signal: running() });
        await first.server.stop();

        const rotated = await start(db, { masterKey: newKey, previousMasterKeys: [oldKey] });
        const box = createAesGcmSecretBox({ masterKey: newKey, previousMasterKeys: [oldKey] });
        // The account key is resealed first, so that the walk's one transaction is the certificate's.
        for (const row of (await sealedKeys(db)).filter((key) => key.table === 'gateway_accounts')) {
          const key_sealed = box.seal({ plaintext: box.open({ sealed: row.key_sealed, context: row.context }), context: row.context });
          await db.knex('gateway_accounts').where({ directory_url: row.id }).update({ key_sealed });
        }
        const renewing = beforeFirstTransaction(db, async () => {
          const renewed = await rotated.gateway('/cert/renew', { host }, 'bridge');
          await rotated.service.runOrder({ orderId: renewed.body.orders[0].order_id, attempt: 1, signal: running() });
        });
        expect(await createKeyReseal({ sql: renewing, secretBox: box }).resealAll()).toEqual({
          accounts: 0,
          orders: 0,
          certificates: 0,
          revocations: 0,
        });
        expect((await sealedKeys(db)).filter((row) => box.needsReseal(row.key_sealed))).toEqual([]);
        await certificateOf(rotated, host);
        await rotated.server.stop();
      } finally {
        await cleanup();
      }
    }, 90_000);

    it('walks every page of orders and fails the run naming the keys that no longer open', async () => {
      const { db, cleanup } = await create();
      const [lostKey, oldKey, newKey] = [newMasterKey(), newMasterKey(), newMasterKey()];
      try {
        const server = await start(db, { masterKey: newKey, previousMasterKeys: [oldKey] }, true);
        const old = createAesGcmSecretBox({ masterKey: oldKey });
        const orders = Array.from({ length: 1_050 }, (_, i) => {
          const orderId = `ord_page${String(i).padStart(5, '0')}`;
          return {
            order_id: orderId,
            host: `h${i}.example.test`,
            host_id: `hst_${i}`,
            agent_id: 'alice',
            active_host: null,
            status: 'failed',
            reason: 'issue',
            challenge: 'http-01',
            directory_url: stack.proxy.directoryUrl,
            acme_order_url: null,
            key_sealed: old.seal({ plaintext: `key of ${orderId}`, context: certificateKeyContext(orderId) }),
            job_id: null,
            attempts: 1,
            last_error: null,
            problem: null,
            created_at: 0,
            updated_at: 0,
            finished_at: 0,
          };
        });
        for (let i = 0; i < orders.length; i += 100) await db.knex('gateway_orders').insert(orders.slice(i, i + 100));
        const lostDirectory = 'https://ca.invalid/directory';
        await db.knex('gateway_accounts').insert({
          directory_url: lostDirectory,
          account_url: 'https://ca.invalid/acct/1',
          key_sealed: createAesGcmSecretBox({ masterKey: lostKey }).seal({ plaintext: 'lost', context: accountKeyContext(lostDirectory) }),
          created_at: 0,
        });

        await expect(server.service.resealKeys()).rejects.toThrow(
          /^1 gateway key\(s\) could not be opened .*gateway_accounts https:\/\/ca\.invalid\/directory: .*not configured/,
        );
        const box = createAesGcmSecretBox({ masterKey: newKey });
        const rows = (await db.knex('gateway_orders').select('order_id', 'key_sealed')) as Array<{ order_id: string; key_sealed: string }>;
        expect(rows).toHaveLength(1_050);
        for (const row of rows) {
          expect(box.open({ sealed: row.key_sealed, context: certificateKeyContext(row.order_id) })).toBe(`key of ${row.order_id}`);
        }
        await server.server.stop();
      } finally {
        await cleanup();
      }
    }, 60_000);
  });
});
