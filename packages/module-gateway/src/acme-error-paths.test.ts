import { JobInterruptedError, JobLeaseLostError, newMasterKey } from '@agentinfra/core';
import { keepOpen } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_DOES_NOT_EXIST, AcmeProblemError } from './acme/problem-document.js';
import { pebbleRequests, startAcmeProxy } from './test-support/acme-proxy.js';
import { acmeToolsAvailable } from './test-support/acme-tools.js';
import { expectChainToRoot } from './test-support/certificate-checks.js';
import { type GatewayTestServer, startGatewayTestServer } from './test-support/gateway-test-server.js';
import { orderThroughStack, stackGateway, usePebbleStack } from './test-support/pebble-stack.js';

const ORDER_NOT_READY = 'urn:ietf:params:acme:error:orderNotReady';
const UNAUTHORIZED = 'urn:ietf:params:acme:error:unauthorized';
const INVALID_CONTACT = 'urn:ietf:params:acme:error:invalidContact';
const running = () => new AbortController().signal;

const {
  finalize: isFinalize,
  order: isOrder,
  authorization: isAuthorization,
  certificate: isCertificate,
  newAccount: isNewAccount,
} = pebbleRequests;

/**
 * The two ACME error paths pebble never takes by itself: `orderNotReady`
 * on finalize (an answer rewritten by a proxy in front of pebble; the
 * order itself is real) and `accountDoesNotExist` (real: pebble restarted
 * on the same ports has forgotten every account and order, as a CA whose
 * database was reset). Orders are run attempt by attempt (`jobs` off) so
 * each attempt's outcome is checked.
 */
const acmeTools = acmeToolsAvailable('agent-gateway ACME error paths');
describe.runIf(acmeTools)('agent-gateway ACME error paths (issue #8)', () => {
  const stack = usePebbleStack();

  describe.each(sqlDatabases())('on $name', ({ name, create }) => {
    const gateway = () => stackGateway(stack);
    const orderFor = (test: GatewayTestServer, host: string) => orderThroughStack(stack, test, host);

    // The attempt's own logic, the same on both engines (it stores what any issued order stores): run on one.
    it.runIf(name === 'sqlite')(
      'finalizes again within the same attempt when the CA answers orderNotReady (RFC 8555 §7.4)',
      async () => {
        const { db, cleanup } = await create();
        const test = await startGatewayTestServer({ db, gateway: gateway(), jobs: { enabled: false } });
        try {
          const host = 'not-ready.example.test';
          const orderId = await orderFor(test, host);
          stack.proxy.failNext(isFinalize, { type: ORDER_NOT_READY, detail: 'Order is not ready to be finalized', status: 403 });
          const from = stack.proxy.requests.length;
          await test.service.runOrder({ orderId, attempt: 1, signal: running() });

          expect(await db.knex('gateway_orders').where({ order_id: orderId }).first()).toMatchObject({
            status: 'valid',
            attempts: 1,
            last_error: null,
            problem: null,
          });
          const seen = stack.proxy.requests.slice(from);
          const refused = seen.findIndex((request) => isFinalize(request) && request.status === 403);
          const polled = seen.findIndex((request, index) => index > refused && isOrder(request) && request.status === 200);
          const accepted = seen.findIndex((request, index) => index > polled && isFinalize(request) && request.status === 200);
          expect(
            [refused, polled, accepted].every((index) => index >= 0),
            JSON.stringify(seen),
          ).toBe(true);
          expect(seen.filter(isFinalize)).toHaveLength(2);
          const got = await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice');
          expectChainToRoot({
            chainPem: got.body.certificate_pem,
            rootPem: await stack.pebble.root(),
            host,
            keyPem: got.body.private_key_pem,
          });
        } finally {
          await test.server.stop();
          await cleanup();
        }
      },
      60_000,
    );

    // An operator reviewing the order sees why the CA refused (here a contact it does not accept), not only that it did.
    it.runIf(name === 'sqlite')('records the problem document of a CA that refuses to register the account', async () => {
      const { db, cleanup } = await create();
      const test = await startGatewayTestServer({ db, gateway: gateway(), jobs: { enabled: false } });
      try {
        stack.proxy.failNext(isNewAccount, { type: INVALID_CONTACT, detail: 'contact domain refused', status: 400 });
        const orderId = await orderFor(test, 'refused-account.example.test');
        // A refusal (4xx with a problem document) ends the order: no retry would change the CA's answer.
        await test.service.runOrder({ orderId, attempt: 1, signal: running() });
        const row = await db.knex('gateway_orders').where({ order_id: orderId }).first();
        expect({ status: row.status, attempts: row.attempts, problem: JSON.parse(row.problem) }).toEqual({
          status: 'failed',
          attempts: 1,
          problem: { type: INVALID_CONTACT, detail: 'contact domain refused', status: 400 },
        });
        expect(row.last_error).toContain('refused to register the ACME account: contact domain refused');
        expect(await db.knex('gateway_accounts').count({ n: '*' })).toEqual([{ n: 0 }]);
      } finally {
        await test.server.stop();
        await cleanup();
      }
    });

    it('registers a new account when the CA has forgotten the stored one, and starts over orders the CA no longer knows', async () => {
      const { db, cleanup } = await create();
      const test = await startGatewayTestServer({ db, gateway: gateway(), jobs: { enabled: false } });
      const order = (orderId: string) => db.knex('gateway_orders').where({ order_id: orderId }).first();
      const accounts = () => db.knex('gateway_accounts').select('account_url');
      try {
        await test.service.runOrder({ orderId: await orderFor(test, 'first.example.test'), attempt: 1, signal: running() });
        const [forgotten] = await accounts();
        expect(forgotten?.account_url).toMatch(/\/my-account\//);

        // Two orders left half-way at the CA: created, then the authorization fetch refused (acme-client retries 5xx itself).
        const resumed = await orderFor(test, 'resumed.example.test');
        const stale = await orderFor(test, 'stale.example.test');
        for (const orderId of [resumed, stale]) {
          stack.proxy.failNext(isAuthorization, { type: UNAUTHORIZED, detail: 'refused for now', status: 403 });
          await expect(test.service.runOrder({ orderId, attempt: 1, signal: running() })).rejects.toThrow(/refused for now/);
          expect((await order(orderId)).acme_order_url).toMatch(/\/my-order\//);
        }

        await stack.pebble.restart();
        // The stored order is fetched with the forgotten account: the account and the CA order are dropped.
        const gone = await test.service.runOrder({ orderId: resumed, attempt: 2, signal: running() }).catch((error: unknown) => error);
        expect(gone).toBeInstanceOf(AcmeProblemError);
        expect((gone as AcmeProblemError).problem?.type).toBe(ACCOUNT_DOES_NOT_EXIST);
        expect(await order(resumed)).toMatchObject({ status: 'processing', acme_order_url: null, key_sealed: null });
        expect(JSON.parse((await order(resumed)).problem).type).toBe(ACCOUNT_DOES_NOT_EXIST);
        expect(await accounts()).toEqual([]);

        await test.service.runOrder({ orderId: resumed, attempt: 3, signal: running() });
        expect(await order(resumed)).toMatchObject({ status: 'valid', last_error: null });
        const [successor] = await accounts();
        expect(successor?.account_url).toMatch(/\/my-account\//);
        expect(successor?.account_url).not.toBe(forgotten?.account_url);

        // The other stored order is unknown to the new CA (404): a new order is made in the same attempt.
        await test.service.runOrder({ orderId: stale, attempt: 2, signal: running() });
        expect(await order(stale)).toMatchObject({ status: 'valid', attempts: 2, last_error: null });
        expect(await accounts()).toEqual([successor]);
        for (const host of ['resumed.example.test', 'stale.example.test']) {
          const got = await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice');
          expectChainToRoot({
            chainPem: got.body.certificate_pem,
            rootPem: await stack.pebble.root(),
            host,
            keyPem: got.body.private_key_pem,
          });
        }
      } finally {
        await test.server.stop();
        await cleanup();
      }
    }, 90_000);

    // The attempt's own logic, the same on both engines: run on one, as it waits out a timeout and a held answer.
    it.runIf(name === 'sqlite')(
      'stores nothing from an attempt that timed out, so it cannot revoke what the next attempt stored',
      async () => {
        const { db, cleanup } = await create();
        // A proxy of its own: a call an earlier test abandoned (acme-client's calls go on) could take the held slot.
        const proxy = await startAcmeProxy({ pebble: stack.pebble });
        // Ample for an attempt to reach its certificate download on a loaded host; the download is held past it.
        const test = await startGatewayTestServer({
          db,
          gateway: { ...gateway(), directoryUrl: proxy.directoryUrl, orderTimeoutMs: 6_000 },
          jobs: { enabled: false },
        });
        try {
          const host = 'slow-download.example.test';
          const orderId = await orderFor(test, host);
          // The certificate download outlives the attempt's timeout: acme-client's call goes on after the attempt gave up.
          const heldDownload = proxy.holdNext(isCertificate);
          const firstAttempt = await test.service.runOrder({ orderId, attempt: 1, signal: running() }).then(
            () => null,
            (error: unknown) => error,
          );
          // When the CA refused the order for good instead (the attempt then returns), say why.
          const afterFirst = await db.knex('gateway_orders').where({ order_id: orderId }).first('status', 'last_error', 'problem');
          expect(firstAttempt, JSON.stringify(afterFirst)).toBeInstanceOf(Error);
          expect(heldDownload.arrived, 'the first attempt timed out before it asked for its certificate').toBe(true);
          await test.service.runOrder({ orderId, attempt: 2, signal: running() });
          const got = await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice');
          expect(got.status).toBe(200);

          // The abandoned attempt gets its certificate now; give it time to act on it.
          await heldDownload.release();
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          expect(await db.knex('gateway_orders').where({ order_id: orderId }).first()).toMatchObject({ status: 'valid', attempts: 2 });
          expect(await db.knex('gateway_revocations').select('serial')).toEqual([]);
          expect((await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice')).body.serial).toBe(got.body.serial);
          expect((await stack.pebble.certStatus(got.body.serial))?.Status).toBe('Valid');
        } finally {
          await test.server.stop();
          await proxy.stop();
          await cleanup();
        }
      },
      60_000,
    );

    // Review: a shutdown during an order's last attempt failed the order, though the queue does not count that attempt
    // and runs it again; an attempt whose lease went to another worker wrote its error over that worker's attempt.
    it.runIf(name === 'sqlite')(
      'records nothing for an attempt the queue stopped, even its last one',
      async () => {
        const { db, cleanup } = await create();
        const test = await startGatewayTestServer({ db, gateway: { ...gateway(), orderMaxAttempts: 2 }, jobs: { enabled: false } });
        try {
          const orderId = await orderFor(test, 'stopped.example.test');
          for (const reason of [new JobInterruptedError(), new JobLeaseLostError()]) {
            const stopped = new AbortController();
            stopped.abort(reason);
            await expect(test.service.runOrder({ orderId, attempt: 2, signal: stopped.signal })).rejects.toBe(reason);
            expect(await db.knex('gateway_orders').where({ order_id: orderId }).first()).toMatchObject({
              status: 'processing',
              last_error: null,
              finished_at: null,
            });
          }
          await test.service.runOrder({ orderId, attempt: 2, signal: running() });
          expect(await db.knex('gateway_orders').where({ order_id: orderId }).first()).toMatchObject({ status: 'valid' });
        } finally {
          await test.server.stop();
          await cleanup();
        }
      },
      60_000,
    );

    // Row locks make the interleaving reachable on PostgreSQL; SQLite runs one write transaction at a time.
    it.runIf(name === 'postgres')(
      'revokes a certificate stored while its host is being released',
      async () => {
        const { db, cleanup } = await create();
        const test = await startGatewayTestServer({ db, gateway: gateway(), jobs: { enabled: false } });
        let unlock = () => {};
        try {
          const host = 'released-meanwhile.example.test';
          const orderId = await orderFor(test, host);
          // Another session holds the certificates table, so the order's store waits at its insert.
          const held = new Promise<void>((locked) => {
            void db.knex.transaction(async (trx) => {
              await trx.raw('lock table gateway_certificates in exclusive mode');
              locked();
              await new Promise<void>((release) => (unlock = release));
            });
          });
          await held;
          const waitingOnLock = async () =>
            Number(
              (
                await db.knex.raw(
                  "select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%gateway_certificates%'",
                )
              ).rows[0].n,
            );
          const run = test.service.runOrder({ orderId, attempt: 1, signal: running() });
          await expect.poll(waitingOnLock).toBeGreaterThan(0);
          const release = test.gateway('/host/release', { agent_id: 'alice', host }, 'alice');
          await new Promise((resolve) => setTimeout(resolve, 300));
          unlock();
          await run;
          const released = await release;

          expect(released.status).toBe(200);
          expect(released.body.certificate_revocation).toBe('scheduled');
          expect(await db.knex('gateway_certificates').where({ host })).toEqual([]);
          expect(await db.knex('gateway_revocations').where({ host })).toHaveLength(1);
        } finally {
          unlock();
          await test.server.stop();
          await cleanup();
        }
      },
      60_000,
    );

    it('keeps the account another replica registered after the CA forgot the old one', async () => {
      const { db, cleanup } = await create();
      const masterKey = newMasterKey();
      const first = await startGatewayTestServer({ db: keepOpen(db), gateway: gateway(), jobs: { enabled: false }, masterKey });
      const second = await startGatewayTestServer({
        db: keepOpen(db),
        gateway: gateway(),
        jobs: { enabled: false },
        masterKey,
        agents: false,
      });
      const accounts = async () =>
        ((await db.knex('gateway_accounts').select('account_url')) as Array<{ account_url: string }>).map((row) => row.account_url);
      const run = (test: GatewayTestServer, orderId: string, attempt: number) =>
        test.service.runOrder({ orderId, attempt, signal: running() });
      try {
        await run(first, await orderFor(first, 'one.example.test'), 1);
        await run(second, await orderFor(second, 'two.example.test'), 1);
        const [forgotten] = await accounts();

        await stack.pebble.restart();
        const three = await orderFor(first, 'three.example.test');
        await expect(run(first, three, 1)).rejects.toThrow(AcmeProblemError);
        expect(await accounts()).toEqual([]);
        await run(first, three, 2);
        const [successor] = await accounts();
        expect(successor).not.toBe(forgotten);

        // The second replica still holds the forgotten account: its failure must not drop the successor.
        const four = await orderFor(second, 'four.example.test');
        await expect(run(second, four, 1)).rejects.toThrow(AcmeProblemError);
        expect(await accounts()).toEqual([successor]);
        await run(second, four, 2);
        expect(await accounts()).toEqual([successor]);
        expect((await db.knex('gateway_orders').where({ order_id: four }).first()).status).toBe('valid');
      } finally {
        await first.server.stop();
        await second.server.stop();
        await cleanup();
      }
    }, 90_000);
  });
});
