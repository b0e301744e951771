import { createLogger } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import type { DnsProvider } from '../dns01/dns-provider.js';
import { createDns01Responder } from './challenge-responders.js';

/** A provider that records what it was asked to publish, as `add <name> <value>` / `remove <name> <value>`. */
function recordingProvider(): DnsProvider & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    describe: () => 'recording',
    addTxt: async ({ name, value }) => {
      calls.push(`add ${name} ${value}`);
    },
    removeTxt: async ({ name, value }) => {
      calls.push(`remove ${name} ${value}`);
    },
  };
}

describe('DNS-01 responder', () => {
  it('removes the record it published when the attempt is aborted while it waits for propagation', async () => {
    const provider = recordingProvider();
    const responder = createDns01Responder({
      provider,
      // Resolvers that never see the record: the responder keeps waiting until the abort.
      txtLookup: { describe: () => 'never', lookup: async () => ({ ok: true, values: [] }) },
      propagationTimeoutMs: 120_000,
      logger: createLogger({ level: 'silent' }),
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('order attempt timed out')), 300);
    const provision = responder.provision({
      orderId: 'ord_1',
      host: 'app.example.test',
      token: 'token',
      keyAuthorization: 'key-authorization',
      signal: controller.signal,
    });

    await expect(provision).rejects.toThrow('order attempt timed out');
    expect(provider.calls).toEqual([
      'add _acme-challenge.app.example.test key-authorization',
      'remove _acme-challenge.app.example.test key-authorization',
    ]);
  });
});
