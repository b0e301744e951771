import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from './index.js';
import { type StubServer, sendJson, startStubServer } from './test-support/stub-server.js';

let stub: StubServer | undefined;
afterEach(() => stub?.close());

const query = { agent_id: 'a', q: 'x', scope: ['self'] };

// Regression: a timeoutMs above 2^31−1 ms fired at once (TimeoutOverflowWarning), so every call timed out.
describe('timeoutMs', () => {
  it.each([2 ** 31, 2 ** 40, Number.POSITIVE_INFINITY])('%d does not time out a call answered after 200 ms', async (timeoutMs) => {
    stub = await startStubServer((_n, _request, response) => setTimeout(() => sendJson(response, { hits: [] }), 200));
    expect(await createClient({ url: stub.url, key: 'dk_x', timeoutMs }).memory.query(query)).toEqual({ hits: [] });
    expect(await createClient({ url: stub.url, key: 'dk_x' }).memory.query(query, { timeoutMs })).toEqual({ hits: [] });
  });

  it.each([-1, Number.NaN])('%d is refused by createClient with invalid_request', (timeoutMs) => {
    expect(() => createClient({ url: 'http://127.0.0.1:1', timeoutMs })).toThrow(
      expect.objectContaining({ status: 0, code: 'invalid_request' }),
    );
  });
});

// Review: retries: NaN was taken as it was, and no count of tries reaches NaN: a 429 was retried for ever.
describe('retries', () => {
  it.each([Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY])(
    '%d is refused by createClient and by a call with invalid_request',
    async (retries) => {
      expect(() => createClient({ url: 'http://127.0.0.1:1', retries })).toThrow(
        expect.objectContaining({ status: 0, code: 'invalid_request' }),
      );
      let calls = 0;
      stub = await startStubServer((_n, _request, response) => {
        calls += 1;
        response
          .writeHead(429, { 'retry-after': '0', 'content-type': 'application/json' })
          .end('{"error":{"code":"rate_limited","message":"slow"}}');
      });
      const call = createClient({ url: stub.url, key: 'dk_x' }).memory.query(query, { retries });
      await expect(call).rejects.toMatchObject({ status: 0, code: 'invalid_request' });
      expect(calls).toBe(0);
    },
  );
});

describe('url', () => {
  // Review: a base URL with a query sent every call to /?a=1/functions/v1/…, one with a fragment to /.
  it.each(['http://127.0.0.1:8787?a=1', 'http://127.0.0.1:8787/#x'])('%s is refused with invalid_request', (url) => {
    expect(() => createClient({ url })).toThrow(expect.objectContaining({ status: 0, code: 'invalid_request' }));
  });
});
