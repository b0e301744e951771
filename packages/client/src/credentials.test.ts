import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from './index.js';
import { failureOf } from './test-support/failure-of.js';
import { type StubServer, sendJson, startStubServer } from './test-support/stub-server.js';

let stub: StubServer | undefined;
afterEach(() => stub?.close());

const query = { agent_id: 'a', q: 'x', scope: ['self'] };

/** What createClient throws for `options`. */
function refusal(options: Parameters<typeof createClient>[0]): unknown {
  try {
    createClient(options);
  } catch (error) {
    return error;
  }
  return undefined;
}

// Regression: a key with a line break made Headers throw a TypeError quoting the key, which became a retried
// `network_error`; a url with user:password put the password in messages.
describe('the credential never reaches an error message', () => {
  it.each(['dk_TOPSECRET\n', 'dk_TOP SECRET', 'dk_TOPSECRET\u0000', 'dk_TOPSECRET\u200b'])(
    'createClient refuses the key %j with invalid_request, not quoting it',
    (key) => {
      const error = refusal({ url: 'http://127.0.0.1:1', key });
      expect(error).toMatchObject({ status: 0, code: 'invalid_request' });
      expect(String((error as Error).message)).not.toContain('TOP');
    },
  );

  it('createClient refuses a url with a user name or password, not quoting it', () => {
    const error = refusal({ url: 'http://user:hunter2@127.0.0.1:1', key: 'dk_x' });
    expect(error).toMatchObject({ status: 0, code: 'invalid_request' });
    expect(String((error as Error).message)).not.toContain('hunter2');
  });

  it('a per-call header value that is not valid is invalid_request, not quoted, never sent or retried', async () => {
    let calls = 0;
    const client = createClient({
      url: 'http://127.0.0.1:1',
      key: 'dk_x',
      fetch: (input, init) => {
        calls += 1;
        return fetch(input, init);
      },
    });
    const error = await failureOf(client.memory.query(query, { headers: { 'x-trace': 'tok_SECRET\nX' } }));
    expect(error).toMatchObject({ status: 0, code: 'invalid_request' });
    expect(`${error.message} ${String(error.cause)}`).not.toContain('SECRET');
    expect(calls).toBe(0);
  });

  // Review: a proxy that repeats the request's headers in its error body put the key in the error message.
  it('a credential a server echoes in its error body is redacted from the message and details', async () => {
    stub = await startStubServer((_n, request, response) => {
      const echoed = request.headers.authorization ?? '';
      if (request.url?.endsWith('/mem/query')) {
        const body = { error: { code: 'forbidden', message: `refused ${echoed}`, details: { echoed } } };
        return response.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      }
      response.writeHead(502, { 'content-type': 'text/html' }).end(`<h1>Bad gateway</h1><pre>${echoed}</pre>`);
    });
    const client = createClient({ url: stub.url, key: 'dk_TOPSECRET', retries: 0 });
    const refused = await failureOf(client.memory.query(query));
    expect(refused).toMatchObject({
      status: 403,
      code: 'forbidden',
      message: 'refused Bearer [redacted]',
      details: { echoed: 'Bearer [redacted]' },
    });
    const proxied = await failureOf(client.memory.query(query, { headers: { authorization: 'Bearer dt_OTHERSECRET' }, retries: 0 }));
    const written = await failureOf(client.memory.write({ agent_id: 'a', kind: 'semantic', text: 't', provenance: 'p', scope: ['self'] }));
    for (const error of [proxied, written])
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toMatch(/SECRET/);
  });
});

// Regression: `{ Authorization }` was sent as "Bearer dt_…, Bearer dk_…" and `{ authorization }` was replaced by the key.
describe('per-call headers', () => {
  it.each(['Authorization', 'authorization'])('%s replaces the client key (e.g. to call with a delegation token)', async (name) => {
    const seen: (string | undefined)[] = [];
    stub = await startStubServer((_n, request, response) => {
      seen.push(request.headers.authorization);
      sendJson(response, { hits: [] });
    });
    const client = createClient({ url: stub.url, key: 'dk_device' });
    await client.memory.query(query, { headers: { [name]: 'Bearer dt_delegation' } });
    await client.memory.query(query);
    expect(seen).toEqual(['Bearer dt_delegation', 'Bearer dk_device']);
  });
});
