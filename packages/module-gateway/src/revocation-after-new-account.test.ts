import { embeddedDatabase } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_DOES_NOT_EXIST, AcmeProblemError } from './acme/problem-document.js';
import { pebbleRequests } from './test-support/acme-proxy.js';
import { acmeToolsAvailable } from './test-support/acme-tools.js';
import { startGatewayTestServer } from './test-support/gateway-test-server.js';
import { orderThroughStack, stackGateway, usePebbleStack } from './test-support/pebble-stack.js';

const running = () => new AbortController().signal;

/**
 * RFC 8555 §7.6: a certificate ordered under an ACME account the gateway has
 * since replaced (the CA answered `accountDoesNotExist`, so a new account was
 * registered) is revoked all the same: the new account holds no
 * authorizations for its names, so the request is signed with the
 * certificate's own key. Orders and the revocation run attempt by attempt
 * (`jobs` off); the CA's answer for the old account is injected by a proxy
 * in front of pebble, which really issued and really revokes the certificate.
 * On SQLite only: what is tested is the ACME exchange; the rows it reads and
 * writes (account forgotten, revocation done) are the same statements that
 * acme-error-paths.test.ts (accounts) and certificates.test.ts (revocations)
 * run on both engines.
 */
const acmeTools = acmeToolsAvailable('agent-gateway revocation after a new ACME account');
describe.runIf(acmeTools)('agent-gateway revocation after a new ACME account', () => {
  const stack = usePebbleStack();

  describe.each(embeddedDatabase())('on $name', ({ create }) => {
    it('revokes a certificate ordered under the account the gateway replaced', async () => {
      const { db, cleanup } = await create();
      const test = await startGatewayTestServer({ db, gateway: stackGateway(stack), jobs: { enabled: false } });
      const orderFor = (host: string) => orderThroughStack(stack, test, host);
      const accounts = async () =>
        ((await db.knex('gateway_accounts').select('account_url')) as Array<{ account_url: string }>).map((row) => row.account_url);
      try {
        const host = 'old-account.example.test';
        await test.service.runOrder({ orderId: await orderFor(host), attempt: 1, signal: running() });
        const { serial } = (await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice')).body as { serial: string };
        expect((await stack.pebble.certStatus(serial))?.Status).toBe('Valid');
        const [first] = await accounts();

        // The CA answers that the account does not exist: the gateway forgets it and registers a new one.
        const next = await orderFor('new-account.example.test');
        stack.proxy.failNext(pebbleRequests.newOrder, { type: ACCOUNT_DOES_NOT_EXIST, detail: 'unknown account', status: 400 });
        await expect(test.service.runOrder({ orderId: next, attempt: 1, signal: running() })).rejects.toThrow(AcmeProblemError);
        await test.service.runOrder({ orderId: next, attempt: 2, signal: running() });
        const [second] = await accounts();
        expect(second).toMatch(/\/my-account\//);
        expect(second).not.toBe(first);

        const released = await test.gateway('/host/release', { agent_id: 'alice', host }, 'alice');
        expect(released.body.certificate_revocation).toBe('scheduled');
        const revocation = await db.knex('gateway_revocations').where({ host }).first();
        await test.service.runRevocation({ revocationId: revocation.revocation_id, attempt: 1, signal: running() });
        expect(await stack.pebble.certStatus(serial)).toMatchObject({ Status: 'Revoked', Reason: 5 });
        expect(await db.knex('gateway_revocations').where({ host }).first()).toMatchObject({
          status: 'revoked',
          last_error: null,
          key_sealed: null,
        });
      } finally {
        await test.server.stop();
        await cleanup();
      }
    }, 90_000);

    // Review: when the CA refused to register a new account (after the old one was forgotten), every attempt failed
    // on getting the account's client, although the certificate's own key needs no account.
    it('revokes with the certificate key when the CA refuses to register a new account', async () => {
      const { db, cleanup } = await create();
      const test = await startGatewayTestServer({ db, gateway: stackGateway(stack), jobs: { enabled: false } });
      const orderFor = (host: string) => orderThroughStack(stack, test, host);
      try {
        const host = 'no-account.example.test';
        await test.service.runOrder({ orderId: await orderFor(host), attempt: 1, signal: running() });
        const { serial } = (await test.gateway('/cert/get', { agent_id: 'alice', host }, 'alice')).body as { serial: string };

        // The CA answers that the account does not exist: the gateway forgets it.
        const next = await orderFor('forgotten-account.example.test');
        stack.proxy.failNext(pebbleRequests.newOrder, { type: ACCOUNT_DOES_NOT_EXIST, detail: 'unknown account', status: 400 });
        await expect(test.service.runOrder({ orderId: next, attempt: 1, signal: running() })).rejects.toThrow(AcmeProblemError);
        expect(Number((await db.knex('gateway_accounts').count({ n: '*' }).first())?.n)).toBe(0);

        const released = await test.gateway('/host/release', { agent_id: 'alice', host }, 'alice');
        expect(released.body.certificate_revocation).toBe('scheduled');
        const revocation = await db.knex('gateway_revocations').where({ host }).first();
        stack.proxy.failNext(pebbleRequests.newAccount, {
          type: 'urn:ietf:params:acme:error:externalAccountRequired',
          detail: 'an external account binding is required',
          status: 403,
        });
        await test.service.runRevocation({ revocationId: revocation.revocation_id, attempt: 1, signal: running() });
        expect(stack.proxy.requests.filter(pebbleRequests.newAccount).at(-1)?.status).toBe(403);
        expect(await stack.pebble.certStatus(serial)).toMatchObject({ Status: 'Revoked', Reason: 5 });
        expect(await db.knex('gateway_revocations').where({ host }).first()).toMatchObject({
          status: 'revoked',
          last_error: null,
          key_sealed: null,
        });
      } finally {
        await test.server.stop();
        await cleanup();
      }
    }, 90_000);
  });
});
