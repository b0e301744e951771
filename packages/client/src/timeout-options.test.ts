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
