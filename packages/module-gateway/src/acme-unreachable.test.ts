import { createServer, type Socket } from 'node:net';
import type { SqlDatabase } from '@agentinfra/core';
import { embeddedDatabase } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeClient } from './acme/acme-http.js';
import { freeTcpPort } from './test-support/free-port.js';
import { type GatewayTestServer, startGatewayTestServer } from './test-support/gateway-test-server.js';
import { pendingRevocation } from './test-support/pending-revocation.js';

/** acme-client retries a request that got no answer 5 times, 5 s apart and more: an attempt failing within this did not wait. */
const FAIL_FAST_MS = 5_000;
const running = () => new AbortController().signal;

/**
 * A port on 127.0.0.1 that accepts TCP and answers `text` (plain text, so a TLS handshake with it fails), or with
 * `null` says nothing and keeps the connection open. @returns its port and a stop.
 */
async function tcpServer(text: string | null): Promise<{ port: number; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (text !== null) socket.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return { port, stop };
}

/**
 * A CA that cannot be reached (a mistyped directory URL, a CA outage) fails
 * the attempt within seconds, with the directory URL and the cause in the
 * error recorded on the order or revocation, so the job runner's back-off
 * retries it: acme-client's own retries of such requests (5 of them, 75 s
 * in all) are not waited for. Rows only, `jobs` off: each attempt is run by hand.
 * On SQLite only: network failures do not depend on the SQL engine, and the
 * order and revocation rows an attempt updates are written by the same code
 * on both engines in certificates.test.ts and acme-error-paths.test.ts.
 */
describe.each(embeddedDatabase())('agent-gateway with an unreachable ACME directory on $name', ({ create }) => {
  let tls: { port: number; stop: () => Promise<void> };
  let silent: { port: number; stop: () => Promise<void> };
  const cases: Array<{ name: string; directoryUrl: () => Promise<string>; cause: RegExp }> = [
    { name: 'a closed port', directoryUrl: async () => `https://127.0.0.1:${await freeTcpPort()}/dir`, cause: /ECONNREFUSED/ },
    { name: 'an unresolvable host', directoryUrl: async () => 'https://acme.invalid/dir', cause: /ENOTFOUND|EAI_AGAIN/ },
    { name: 'a server that does not speak TLS', directoryUrl: async () => `https://127.0.0.1:${tls.port}/dir`, cause: /SSL|TLS|EPROTO/i },
    // Accepts the connection and never answers: axios alone would wait for ever, holding the attempt until orderTimeoutMs.
    { name: 'a server that never answers', directoryUrl: async () => `https://127.0.0.1:${silent.port}/dir`, cause: /timeout/i },
  ];

  beforeAll(async () => {
    tls = await tcpServer('not TLS\r\n');
    silent = await tcpServer(null);
    // acme-client is imported on first use: its loading is no part of the time an attempt takes to fail.
    await acmeClient();
  });
  afterAll(async () => {
    await tls?.stop();
    await silent?.stop();
  });

  /** A gateway on a new database whose directory is `directoryUrl`, run by `use`, then stopped. */
  async function withGateway(directoryUrl: string, use: (test: GatewayTestServer, db: SqlDatabase) => Promise<void>): Promise<void> {
    const { db, cleanup } = await create();
    const test = await startGatewayTestServer({
      db,
      gateway: { directoryUrl, httpPort: 0, dnsServers: ['127.0.0.1:1'], acmeRequestTimeoutMs: 1_000 },
      jobs: { enabled: false },
    });
    try {
      await use(test, db);
    } finally {
      await test.server.stop();
      await cleanup();
    }
  }

  /** `work`'s rejection, which must come within {@link FAIL_FAST_MS}. */
  async function failsFast(work: Promise<unknown>): Promise<Error> {
    const started = Date.now();
    const error = await work.then(
      () => new Error('the attempt succeeded'),
      (failure: unknown) => failure as Error,
    );
    expect(Date.now() - started).toBeLessThan(FAIL_FAST_MS);
    return error;
  }

  it.each(cases)(
    'fails an order attempt at once on $name, with the cause recorded on the order',
    async ({ name, directoryUrl, cause }) => {
      const directory = await directoryUrl();
      const host = `${name.replace(/\W+/g, '-').toLowerCase()}.example.test`;
      await withGateway(directory, async (test, db) => {
        await db
          .knex('gateway_hosts')
          .insert({ host, host_id: `hst_${host}`, agent_id: 'alice', bound_at: Date.now(), ips: '[]', ips_updated_at: null });
        const issued = await test.gateway('/cert/issue', { host }, 'bridge');
        expect(issued.status, JSON.stringify(issued.body)).toBe(200);
        const orderId = issued.body.order_id as string;

        const error = await failsFast(test.service.runOrder({ orderId, attempt: 1, signal: running() }));
        expect(error.message).toContain(directory);
        expect(error.message).toMatch(cause);
        const order = await db.knex('gateway_orders').where({ order_id: orderId }).first();
        // Not final: the job runner retries it with its back-off.
        expect(order).toMatchObject({ status: 'processing', attempts: 1, last_error: error.message, problem: null });
      });
    },
    20_000,
  );

  it.each(cases)(
    'fails a revocation attempt at once on $name, with the cause recorded on the revocation',
    async ({ name, directoryUrl, cause }) => {
      const directory = await directoryUrl();
      const row = pendingRevocation(`rvk_${name.replace(/\W+/g, '_')}`, directory);
      await withGateway(directory, async (test, db) => {
        await db.knex('gateway_revocations').insert(row);
        const error = await failsFast(test.service.runRevocation({ revocationId: row.revocation_id, attempt: 1, signal: running() }));
        expect(error.message).toContain(directory);
        expect(error.message).toMatch(cause);
        expect(await db.knex('gateway_revocations').where({ revocation_id: row.revocation_id }).first()).toMatchObject({
          status: 'pending',
          attempts: 1,
          last_error: error.message,
          problem: null,
        });
      });
    },
    20_000,
  );
});
