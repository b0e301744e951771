import { afterAll, beforeAll } from 'vitest';
import { type AcmeProxy, startAcmeProxy } from './acme-proxy.js';
import { type ChallTestServer, startChallTestServer } from './challtestsrv.js';
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
