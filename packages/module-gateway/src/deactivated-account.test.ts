import { createAesGcmSecretBox, newMasterKey, type SqlDatabase } from '@agentinfra/core';
import { embeddedDatabase } from '@agentinfra/testkit';
import acme from 'acme-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcmeProblemError, UNAUTHORIZED } from './acme/problem-document.js';
import { type AccountRow, accountKeyContext } from './gateway-rows.js';
import { pebbleRequests } from './test-support/acme-proxy.js';
import { acmeToolsAvailable } from './test-support/acme-tools.js';
import { type GatewayTestServer, startGatewayTestServer } from './test-support/gateway-test-server.js';
import { orderThroughStack, stackGateway, usePebbleStack } from './test-support/pebble-stack.js';

const running = () => new AbortController().signal;

/**
 * RFC 8555 §7.3.6, §7.1.2: a CA that deactivated or revoked the server's
 * account answers its requests with `unauthorized`. The gateway then fetches
 * the account, forgets it when the CA no longer accepts it, and registers a
 * new one on the next attempt; an `unauthorized` for a valid account keeps
 * it. The account is really deactivated at pebble (a POST to its URL signed
 * with the stored key); the other `unauthorized` is injected by a stack.proxy.
 * Orders run attempt by attempt (`jobs` off). On SQLite only: the account's
 * status is ACME logic; forgetting the account row is the statement
 * acme-error-paths.test.ts runs on both engines.
 */
const acmeTools = acmeToolsAvailable('agent-gateway deactivated ACME account');
describe.runIf(acmeTools)('agent-gateway deactivated ACME account', () => {
  const stack = usePebbleStack();

  describe.each(embeddedDatabase())('on $name', ({ create }) => {
    const masterKey = newMasterKey();
    let db: SqlDatabase;
    let cleanup: () => Promise<void>;
    let test: GatewayTestServer;

    beforeAll(async () => {
      ({ db, cleanup } = await create());
      test = await startGatewayTestServer({
        db,
        masterKey,
        gateway: stackGateway(stack),
        jobs: { enabled: false },
      });
    });
    afterAll(async () => {
      await test?.server.stop();
      await cleanup?.();
    });

    const orderFor = (host: string) => orderThroughStack(stack, test, host);
    const accounts = async () => (await db.knex('gateway_accounts').select('*')) as AccountRow[];
    /** The one stored account. @throws when there is none or more than one. */
    const onlyAccount = async (): Promise<AccountRow> => {
      const rows = await accounts();
      if (rows.length !== 1 || !rows[0]) throw new Error(`expected one stored account, found ${rows.length}`);
      return rows[0];
    };
    const orderStatus = async (orderId: string) => (await db.knex('gateway_orders').where({ order_id: orderId }).first()).status;

    it('registers a new account after the CA deactivated the stored one', async () => {
      const first = await orderFor('before-deactivation.example.test');
      await test.service.runOrder({ orderId: first, attempt: 1, signal: running() });
      expect(await orderStatus(first)).toBe('valid');
      const account = await onlyAccount();

      // The account holder deactivates the account at the CA (RFC 8555 §7.3.6), with the stored key.
      const key = createAesGcmSecretBox({ masterKey }).open({
        sealed: account.key_sealed,
        context: accountKeyContext(account.directory_url),
      });
      const holder = new acme.Client({ directoryUrl: account.directory_url, accountKey: key, accountUrl: account.account_url });
      expect((await holder.updateAccount({ status: 'deactivated' })).status).toBe('deactivated');

      const next = await orderFor('after-deactivation.example.test');
      const refused = test.service.runOrder({ orderId: next, attempt: 1, signal: running() });
      await expect(refused).rejects.toThrow(AcmeProblemError);
      await expect(refused).rejects.toMatchObject({ problem: { type: UNAUTHORIZED } });
      expect(await accounts()).toEqual([]);

      await test.service.runOrder({ orderId: next, attempt: 2, signal: running() });
      expect(await orderStatus(next)).toBe('valid');
      const replacement = await onlyAccount();
      expect(replacement.account_url).toMatch(/\/my-account\//);
      expect(replacement.account_url).not.toBe(account.account_url);
    }, 90_000);

    it('keeps a valid account the CA refused one request with unauthorized', async () => {
      const orderId = await orderFor('refused-once.example.test');
      stack.proxy.failNext(pebbleRequests.newOrder, { type: UNAUTHORIZED, detail: 'not allowed to order this name', status: 403 });
      await expect(test.service.runOrder({ orderId, attempt: 1, signal: running() })).rejects.toMatchObject({
        problem: { type: UNAUTHORIZED },
      });
      const kept = await accounts();
      expect(kept).toHaveLength(1);
      await test.service.runOrder({ orderId, attempt: 2, signal: running() });
      expect(await orderStatus(orderId)).toBe('valid');
      expect(await accounts()).toEqual(kept);
    }, 90_000);
  });
});
