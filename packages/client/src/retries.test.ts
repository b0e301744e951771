import { afterEach, describe, expect, it } from 'vitest';
import { AgentInfraError, createClient, DEFAULT_RETRY_POLICY } from './index.js';
import { retryDelayMs } from './retry-policy.js';
import { type StubServer, sendError, sendJson, startStubServer } from './test-support/stub-server.js';

let stub: StubServer | undefined;
afterEach(() => stub?.close());

const query = { agent_id: 'a', q: 'x', scope: ['self'] };
const write = { agent_id: 'a', kind: 'semantic' as const, text: 'x', provenance: 'p', scope: ['self'] };

describe('retries, timeouts and aborts on a real port', () => {
  it('429: waits Retry-After seconds, then succeeds', async () => {
    stub = await startStubServer((n, _request, response) =>
      n === 0 ? sendError(response, 429, 'rate_limited', { 'retry-after': '1' }) : sendJson(response, { hits: [] }),
    );
    const client = createClient({ url: stub.url, key: 'dk_x' });
    expect(await client.memory.write(write).catch((error) => error)).toEqual({ hits: [] });
    const [first, second] = stub.arrivals as [number, number];
    expect(second - first).toBeGreaterThanOrEqual(950);
  });

  it('spreads waits of Retry-After over up to 20 % more, so callers refused together come back apart', () => {
    const refusal = new AgentInfraError({ status: 503, code: 'unavailable', message: 'busy', retryAfterSeconds: 2 });
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, refusal, () => 0)).toBe(2_000);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, refusal, () => 0.5)).toBe(2_200);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, refusal, () => 0.999)).toBeCloseTo(2_400, -1);
    const tooLong = new AgentInfraError({ status: 429, code: 'rate_limited', message: 'later', retryAfterSeconds: 11 });
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, tooLong)).toBeUndefined();
  });

  it('a 500 is retried for idempotent routes only', async () => {
    stub = await startStubServer((n, request, response) => {
      if (request.url?.endsWith('/mem/query') && n === 0) return sendError(response, 500, 'internal');
      if (request.url?.endsWith('/mem/write')) return sendError(response, 500, 'internal');
      sendJson(response, { hits: [] });
    });
    const client = createClient({ url: stub.url, key: 'dk_x' });
    expect(await client.memory.query(query)).toEqual({ hits: [] });
    expect(stub.arrivals).toHaveLength(2);
    const error = await client.memory.write(write).catch((failure: AgentInfraError) => failure);
    expect(error).toMatchObject({ status: 500, code: 'internal', requestId: 'req-500' });
    expect(stub.arrivals).toHaveLength(3);
  });

  it('503 is retried for any route; gives up after `retries` with the last error', async () => {
    stub = await startStubServer((_n, _request, response) => sendError(response, 503, 'unavailable', { 'retry-after': '0' }));
    const client = createClient({ url: stub.url, key: 'dk_x', retries: 3 });
    const error = await client.memory.write(write).catch((failure: AgentInfraError) => failure);
    expect(error).toMatchObject({ status: 503, code: 'unavailable' });
    expect(stub.arrivals).toHaveLength(4);
  });

  // Regression: any 503 was retried on every route, so a proxy's 503 after forwarding duplicated a /mem/write.
  it("a 503 that is not the server's own `unavailable` body is retried for idempotent routes only", async () => {
    stub = await startStubServer((_n, _request, response) => {
      response.writeHead(503, { 'content-type': 'text/html', 'retry-after': '0' });
      response.end('<html>Service Unavailable</html>');
    });
    const client = createClient({ url: stub.url, key: 'dk_x' });
    expect(await client.memory.write(write).catch((error: AgentInfraError) => error)).toMatchObject({ status: 503, code: 'server_error' });
    expect(stub.arrivals).toHaveLength(1);
    await client.memory.query(query).catch(() => undefined);
    expect(stub.arrivals).toHaveLength(4);
  });

  it('network errors are retried for idempotent routes only', async () => {
    stub = await startStubServer(() => undefined);
    const url = stub.url;
    await stub.close();
    stub = undefined;
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls += 1;
      return fetch(input, init);
    };
    const client = createClient({ url, key: 'dk_x', fetch: counting, retries: 2 });
    expect(await client.memory.query(query).catch((error: AgentInfraError) => error.code)).toBe('network_error');
    expect(calls).toBe(3);
    expect(await client.memory.write(write).catch((error: AgentInfraError) => error.code)).toBe('network_error');
    expect(calls).toBe(4);
  });

  it('times out a call that gets no answer within timeoutMs, without retrying', async () => {
    stub = await startStubServer(() => undefined);
    const client = createClient({ url: stub.url, key: 'dk_x', timeoutMs: 200 });
    const started = performance.now();
    const error = await client.memory.query(query).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(AgentInfraError);
    expect(error).toMatchObject({ status: 0, code: 'timeout' });
    expect(performance.now() - started).toBeLessThan(5_000);
    // At most one: on a loaded host the request may not even have arrived within the 200 ms.
    expect(stub.arrivals.length).toBeLessThanOrEqual(1);
  });

  it("stops at the caller's AbortSignal, also while waiting to retry", async () => {
    stub = await startStubServer((_n, _request, response) => sendError(response, 429, 'rate_limited', { 'retry-after': '5' }));
    const client = createClient({ url: stub.url, key: 'dk_x' });
    const error = await client.memory.query(query, { signal: AbortSignal.timeout(300) }).catch((failure: unknown) => failure);
    expect(error).toMatchObject({ status: 0, code: 'aborted' });
    expect(stub.arrivals.length).toBeLessThanOrEqual(1);
  });

  // Regression: an abort or timeout while an error body was read became that 5xx, retried after its Retry-After.
  it.each([
    { when: 'the caller aborts', options: () => ({ signal: AbortSignal.timeout(300) }), code: 'aborted' },
    { when: 'timeoutMs passes', options: () => ({ timeoutMs: 300 }), code: 'timeout' },
  ])('$when while a 503 body is read: $code at once, not retried', async ({ options, code }) => {
    stub = await startStubServer((_n, _request, response) => {
      response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '5' });
      response.write('{"error":');
    });
    const client = createClient({ url: stub.url, key: 'dk_x', timeoutMs: 0 });
    const started = performance.now();
    expect(await client.memory.query(query, options()).catch((failure: unknown) => failure)).toMatchObject({ status: 0, code });
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(stub.arrivals).toHaveLength(1);
  });
});
