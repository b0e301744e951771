import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AgentInfraError, createClient } from './index.js';
import { failureOf } from './test-support/failure-of.js';
import { type StubServer, sendJson, startStubServer } from './test-support/stub-server.js';

let stub: StubServer | undefined;
afterEach(() => stub?.close());

/** A stub of the artifact routes whose blob store (the PUT and the download) answers as `blob` does. */
async function artifactStub(blob: (response: ServerResponse, request: IncomingMessage) => void): Promise<string> {
  stub = await startStubServer((_n, request, response) => {
    const url = stub?.url;
    if (request.url?.endsWith('/register'))
      return sendJson(response, { artifact_id: 'art_1', upload_url: `${url}/blob`, upload_headers: {}, expires_at: 'x' });
    if (request.url?.endsWith('/commit')) return sendJson(response, { artifact_id: 'art_1', status: 'committed', size: 3, sha256: 'x' });
    if (request.url?.endsWith('/download')) return sendJson(response, { url: `${url}/blob`, expires_at: 'x' });
    blob(response, request);
  });
  return stub.url;
}

const upload = { agent_id: 'a', key: 'k', mime: 'text/plain', data: new Uint8Array([1, 2, 3]) };
let blobRequested = false;
const hang = () => {
  blobRequested = true;
};
/** A signal aborted once the blob store gets the request, and the blob store's answer that aborts it. */
function abortAtBlob(): { signal: AbortSignal; blob: () => void } {
  const controller = new AbortController();
  return { signal: controller.signal, blob: () => controller.abort() };
}

// Regression: the PUT and the download ignored timeoutMs, a caller's abort of the PUT was `network_error`, and the
// download threw a raw DOMException (abort) or TypeError (reset).
describe('artifact transfers: timeouts, aborts and network errors are typed', () => {
  beforeEach(() => {
    blobRequested = false;
  });

  it('upload: a PUT without an answer times out after timeoutMs (the call’s own)', async () => {
    const client = createClient({ url: await artifactStub(hang), key: 'dk_x' });
    const started = performance.now();
    expect(await failureOf(client.artifacts.upload(upload, { timeoutMs: 1_000 }))).toMatchObject({ status: 0, code: 'timeout' });
    expect(blobRequested).toBe(true);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('upload: the caller’s abort is `aborted`', async () => {
    const { signal, blob } = abortAtBlob();
    const client = createClient({ url: await artifactStub(blob), key: 'dk_x' });
    expect(await failureOf(client.artifacts.upload(upload, { signal }))).toMatchObject({ status: 0, code: 'aborted' });
  });

  // Review: when the data source itself stalled, the upload waited for the source after the timeout or abort (a
  // generator's return() waits for its pending next()), so it never settled.
  it('upload: a data source that stalls ends at the timeout and at an abort all the same', async () => {
    const stalled = () =>
      (async function* () {
        yield new Uint8Array([1]);
        await new Promise(() => undefined);
      })();
    const client = createClient({ url: await artifactStub(hang), key: 'dk_x' });
    const data = { ...upload, data: stalled(), size: 3 };
    expect(await failureOf(client.artifacts.upload(data, { timeoutMs: 300 }))).toMatchObject({ status: 0, code: 'timeout' });
    const aborted = client.artifacts.upload({ ...data, data: stalled() }, { signal: AbortSignal.timeout(300), timeoutMs: 0 });
    expect(await failureOf(aborted)).toMatchObject({ status: 0, code: 'aborted' });
  }, 10_000);

  // The first chunk is read before /register: a source that never yields one must still end at the timeout or abort.
  it('upload: a data source that yields nothing ends at the timeout and at an abort, before /register', async () => {
    const silent = () =>
      (async function* () {
        await new Promise(() => undefined);
        yield new Uint8Array([1]);
      })();
    const paths: string[] = [];
    stub = await startStubServer((_n, request, response) => {
      paths.push(request.url ?? '');
      sendJson(response, {});
    });
    const client = createClient({ url: stub.url, key: 'dk_x' });
    const data = { ...upload, data: silent(), size: 3 };
    expect(await failureOf(client.artifacts.upload(data, { timeoutMs: 300 }))).toMatchObject({ status: 0, code: 'timeout' });
    const aborted = client.artifacts.upload({ ...data, data: silent() }, { signal: AbortSignal.timeout(300), timeoutMs: 0 });
    expect(await failureOf(aborted)).toMatchObject({ status: 0, code: 'aborted' });
    expect(paths).toEqual([]);
  }, 10_000);

  it('upload: timeoutMs bounds each wait for progress, not the whole PUT', async () => {
    const client = createClient({
      url: await artifactStub((response, request) => request.on('end', () => response.writeHead(200).end())),
      key: 'dk_x',
      timeoutMs: 1_000,
    });
    async function* slowly() {
      for (let i = 0; i < 15; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        yield new Uint8Array([i]);
      }
    }
    const committed = await client.artifacts.upload({ ...upload, data: slowly(), size: 15 });
    expect(committed.status).toBe('committed');
  });

  it('stream: a blob store without an answer times out', async () => {
    const client = createClient({ url: await artifactStub(hang), key: 'dk_x', timeoutMs: 1_000 });
    expect(await failureOf(client.artifacts.stream({ artifact_id: 'art_1' }))).toMatchObject({ status: 0, code: 'timeout' });
    expect(blobRequested).toBe(true);
  });

  it('stream: the caller’s abort is `aborted`', async () => {
    const { signal, blob } = abortAtBlob();
    const client = createClient({ url: await artifactStub(blob), key: 'dk_x', timeoutMs: 0 });
    expect(await failureOf(client.artifacts.stream({ artifact_id: 'art_1' }, { signal }))).toMatchObject({ status: 0, code: 'aborted' });
  });

  it('stream: a reset connection is `network_error`', async () => {
    const client = createClient({ url: await artifactStub((response) => response.socket?.destroy()), key: 'dk_x' });
    expect(await failureOf(client.artifacts.stream({ artifact_id: 'art_1' }))).toMatchObject({ status: 0, code: 'network_error' });
  });

  it('stream: a body that stalls fails the reader with `timeout`, after the bytes that came', async () => {
    const client = createClient({
      url: await artifactStub((response) => response.writeHead(200).write('first')),
      key: 'dk_x',
      timeoutMs: 1_000,
    });
    const reader = (await client.artifacts.stream({ artifact_id: 'art_1' })).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first');
    const error = await reader.read().then(
      () => undefined,
      (failure: AgentInfraError) => failure,
    );
    expect(error).toMatchObject({ status: 0, code: 'timeout' });
  });
});
