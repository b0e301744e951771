import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from './index.js';
import { failureOf } from './test-support/failure-of.js';
import { type StubServer, sendJson, startStubServer } from './test-support/stub-server.js';

const stubs: StubServer[] = [];
afterEach(async () => {
  await Promise.all(stubs.splice(0).map((stub) => stub.close()));
});

// Regression: fetch followed redirects, so a 307/308 re-sent the body (a secret) to another host and its answer
// resolved as success, and a 301/302 turned the call into a GET.
describe('redirects', () => {
  it.each([301, 302, 307, 308])(
    '%i: throws invalid_response with details.location, sends nothing to the target, never retries',
    async (status) => {
      const elsewhere = await startStubServer((_n, _request, response) => sendJson(response, { key: 'api_token', updated_at: 'forged' }));
      const target = `${elsewhere.url}/collect`;
      const origin = await startStubServer((_n, _request, response) => {
        response.writeHead(status, { location: target });
        response.end();
      });
      stubs.push(elsewhere, origin);
      const client = createClient({ url: origin.url, key: 'dk_x' });
      const error = await failureOf(client.identity.secrets.put({ agent_id: 'a', key: 'api_token', value: 'sk_live_secret' }));
      expect(error).toMatchObject({ status, code: 'invalid_response', details: { location: target } });
      expect(error.message).toContain('set url to the final address');
      expect(elsewhere.arrivals).toHaveLength(0);
      await failureOf(client.identity.secrets.get({ agent_id: 'a', key: 'api_token' }));
      expect(origin.arrivals).toHaveLength(2);
    },
  );
});
