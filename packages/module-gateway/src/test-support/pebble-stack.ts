import { afterAll, beforeAll, expect } from 'vitest';
import type { GatewayConfigInput } from '../config.js';
import { type AcmeProxy, startAcmeProxy } from './acme-proxy.js';
import { type ChallTestServer, startChallTestServer } from './challtestsrv.js';
import { claimHost, type GatewayTestServer } from './gateway-test-server.js';
import { type PebbleServer, startPebble } from './pebble.js';

/** A test CA: challtestsrv as its DNS, pebble (every challenge valid) resolving through it, and an {@link AcmeProxy} in front of pebble. */
export interface PebbleStack {
  dns: ChallTestServer;
  pebble: PebbleServer;
  proxy: AcmeProxy;
}

/**
 * Starts a {@link PebbleStack} before the tests of the enclosing `describe`
 * and stops it after them (call it in the describe's body).
 * @returns the stack, whose fields are set once that describe's `beforeAll` has run.
 */
export function usePebbleStack(): PebbleStack {
  const stack = {} as PebbleStack;
  beforeAll(async () => {
    stack.dns = await startChallTestServer();
    stack.pebble = await startPebble({ alwaysValid: true, dnsServer: stack.dns.dnsServer });
    stack.proxy = await startAcmeProxy({ pebble: stack.pebble });
  });
  afterAll(async () => {
    await stack.proxy?.stop();
    await stack.pebble?.stop();
    await stack.dns?.stop();
  });
  return stack;
}

/**
 * The gateway config for `stack`: its proxy as the ACME directory, pebble's CA trusted, challtestsrv as the DNS,
 * the HTTP-01 listener on a free port, and polling fast enough for tests (50 ms to 500 ms, 40 polls).
 */
export function stackGateway(stack: PebbleStack): GatewayConfigInput {
  return {
    directoryUrl: stack.proxy.directoryUrl,
    caFile: stack.pebble.caFile,
    dnsServers: [stack.dns.dnsServer],
    httpPort: 0,
    acmePollMinMs: 50,
    acmePollMaxMs: 500,
    acmePollAttempts: 40,
  };
}

/** Claims `host` for alice through `stack`'s DNS and queues its certificate order (run by hand). @returns the order id. */
export async function orderThroughStack(stack: PebbleStack, test: GatewayTestServer, host: string): Promise<string> {
  await claimHost(test, 'alice', host, (name, value) => stack.dns.setTxt(name, value));
  const issued = await test.gateway('/cert/issue', { host }, 'bridge');
  expect(issued.status).toBe(200);
  return issued.body.order_id as string;
}
