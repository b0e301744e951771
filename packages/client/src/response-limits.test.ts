import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from './index.js';
import { failureOf } from './test-support/failure-of.js';
import { type StubServer, startStubServer } from './test-support/stub-server.js';

let stub: StubServer | undefined;
afterEach(() => stub?.close());

const query = { agent_id: 'a', q: 'x', scope: ['self'] };

describe('response bodies', () => {
  // Regression: a whole error body was buffered to build a 200-character message.
  it('an error body is read only to its first 64 KiB: an endless one still gives its error', async () => {
    stub = await startStubServer((_n, _request, response) => {
      response.writeHead(500, { 'content-type': 'text/html' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    });
    const client = createClient({ url: stub.url, key: 'dk_x', retries: 0, timeoutMs: 20_000 });
    const error = await failureOf(client.memory.query(query));
    expect(error).toMatchObject({ status: 500, code: 'server_error' });
    expect(error.message).toMatch(/^HTTP 500: a{200}$/);
  });

  // Regression: a 2xx body of any size was read whole (600 MB ended in a retried `network_error`).
  it('a 2xx body larger than maxResponseBytes is invalid_response, not retried', async () => {
    stub = await startStubServer((_n, _request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ hits: [], padding: 'x'.repeat(2_000) }));
    });
    const client = createClient({ url: stub.url, key: 'dk_x', maxResponseBytes: 1_000 });
    const error = await failureOf(client.memory.query(query));
    expect(error).toMatchObject({ status: 0, code: 'invalid_response' });
    expect(error.message).toContain('maxResponseBytes');
    expect(stub.arrivals).toHaveLength(1);
    expect(await createClient({ url: stub.url, key: 'dk_x', maxResponseBytes: 3_000 }).memory.query(query)).toMatchObject({ hits: [] });
  });

  // Regression: `null`, an array or a number resolved as the typed result (every route answers with an object).
  it.each(['null', '[]', '42', '"text"'])('a 2xx body %s (JSON, not an object) is invalid_response', async (body) => {
    stub = await startStubServer((_n, _request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    });
    const client = createClient({ url: stub.url, key: 'dk_x' });
    expect(await failureOf(client.memory.query(query))).toMatchObject({ status: 0, code: 'invalid_response' });
    expect(stub.arrivals).toHaveLength(1);
  });
});
