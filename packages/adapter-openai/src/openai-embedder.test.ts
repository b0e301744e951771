import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runEmbedderContract } from '@agentinfra/core/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAiEmbedder } from './openai-embedder.js';

const API_KEY = 'sk-test-0123456789abcdef';

/** One request as the fake server saw it. */
interface SeenRequest {
  path: string;
  authorization: string | undefined;
  body: { model: string; input: string[]; dimensions?: number; encoding_format?: string };
}

/** What the next requests get instead of vectors; consumed one per request. */
type Scripted = { status: number; body: string; headers?: Record<string, string> } | { delayMs: number };

/**
 * A tiny OpenAI-compatible embeddings server on 127.0.0.1: deterministic,
 * unnormalised vectors (hashed words plus a constant), so texts sharing words
 * score closer. `dimensions` in the request shortens the vectors, as OpenAI does.
 */
class FakeEmbeddingsServer {
  readonly seen: SeenRequest[] = [];
  readonly script: Scripted[] = [];
  dimensions = 32;
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SeenRequest['body'];
    this.seen.push({ path: request.url ?? '', authorization: request.headers.authorization, body });
    const scripted = this.script.shift();
    if (scripted !== undefined && 'delayMs' in scripted) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
    if (scripted !== undefined && 'status' in scripted) {
      response.writeHead(scripted.status, { 'content-type': 'application/json', ...scripted.headers }).end(scripted.body);
      return;
    }
    if (request.url !== '/v1/embeddings' || request.method !== 'POST') {
      response.writeHead(404).end('{"error":{"message":"not found"}}');
      return;
    }
    const size = body.dimensions ?? this.dimensions;
    const data = body.input.map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(text, size) }));
    // Answer out of order: clients must use `index`.
    data.reverse();
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
  }
}

function fakeVector(text: string, size: number): number[] {
  const vector = new Array<number>(size).fill(0.05);
  for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
    let hash = 0x811c9dc5;
    for (const char of word) hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 0x01000193);
    const slot = (hash >>> 0) % size;
    vector[slot] = (vector[slot] ?? 0) + (hash & 1 ? 3 : -3);
  }
  return vector;
}

const fake = new FakeEmbeddingsServer();
let baseUrl = '';

beforeAll(async () => {
  baseUrl = await fake.start();
});
afterAll(async () => {
  await fake.stop();
});

runEmbedderContract({
  name: 'openai-compatible HTTP (local fake server)',
  create: () => createOpenAiEmbedder({ baseUrl, model: 'fake-embed', apiKey: API_KEY, batchSize: 3 }),
  capabilities: { semantic: false },
});

describe('createOpenAiEmbedder', () => {
  beforeEach(() => {
    fake.seen.length = 0;
    fake.script.length = 0;
    fake.dimensions = 32;
  });

  it('learns the dimension from a probe and names model and dimension in its id', async () => {
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed' });
    expect(embedder.dimensions).toBe(32);
    expect(embedder.id).toBe('openai:fake-embed@32');
    expect(fake.seen).toHaveLength(1);
    expect(fake.seen[0]?.path).toBe('/v1/embeddings');
    expect(fake.seen[0]?.authorization).toBeUndefined();
    expect(fake.seen[0]?.body.encoding_format).toBe('float');
  });

  it('accepts a baseUrl that already ends in /v1, and sends the API key as a bearer token', async () => {
    await createOpenAiEmbedder({ baseUrl: `${baseUrl}/v1/`, model: 'fake-embed', apiKey: API_KEY });
    expect(fake.seen[0]?.path).toBe('/v1/embeddings');
    expect(fake.seen[0]?.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('refuses to start when the server dimension differs from the configured one', async () => {
    fake.dimensions = 48;
    const attempt = createOpenAiEmbedder({ baseUrl, model: 'fake-embed', dimensions: 32 });
    await expect(attempt).rejects.toThrow(/returns 48-dimensional vectors, but dimensions is configured as 32/);
    await expect(attempt).rejects.toThrow(/set dimensions to 48/);
  });

  it('verify() re-checks the dimension later', async () => {
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed', dimensions: 32 });
    await embedder.verify();
    fake.dimensions = 16;
    await expect(embedder.verify()).rejects.toThrow(/returns 16-dimensional vectors/);
    await expect(embedder.embed({ texts: ['hello'] })).rejects.toThrow(/returned a 16-dimensional vector, expected 32/);
  });

  it('sends dimensions in the request when asked (OpenAI text-embedding-3 shortening)', async () => {
    fake.dimensions = 1536;
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed', dimensions: 256, requestDimensions: true });
    expect(embedder.id).toBe('openai:fake-embed@256');
    expect(fake.seen[0]?.body.dimensions).toBe(256);
  });

  it('batches, skips empty texts, cuts long texts and repairs lone surrogates', async () => {
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed', batchSize: 2, maxInputChars: 10 });
    fake.seen.length = 0;
    const vectors = await embedder.embed({ texts: ['one', '', 'two', 'three four five six', 'bad\uD800'] });
    expect(vectors).toHaveLength(5);
    expect(fake.seen.map((request) => request.body.input)).toEqual([
      ['one', 'two'],
      ['three four', 'bad\uFFFD'],
    ]);
    expect(Math.hypot(...(vectors[1] ?? []))).toBe(0);
    for (const index of [0, 2, 3, 4]) expect(Math.hypot(...(vectors[index] ?? []))).toBeCloseTo(1, 5);
  });

  it('does not cut a surrogate pair in half', async () => {
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed', maxInputChars: 4 });
    fake.seen.length = 0;
    await embedder.embed({ texts: ['abc🎉def'] });
    expect(fake.seen[0]?.body.input).toEqual(['abc']);
  });

  it('wraps an HTTP 500 with the endpoint, the status and the cause, without the API key', async () => {
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed', apiKey: API_KEY, maxRetries: 2 });
    fake.seen.length = 0;
    fake.script.push({ status: 500, body: `{"error":{"message":"boom for key ${API_KEY}"}}` });
    const error = await embedder.embed({ texts: ['hello'] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    const { message, cause } = error as Error;
    expect(message).toMatch(/embedding request to http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings \(model "fake-embed"\) failed: HTTP 500/);
    expect(message).toContain('boom for key [redacted]');
    expect(cause).toBeInstanceOf(Error);
    expect(`${message} ${(cause as Error).message} ${JSON.stringify(error)}`).not.toContain(API_KEY);
    expect(fake.seen).toHaveLength(1);
  });

  it('never repeats the API key, even in the masked form OpenAI echoes on 401', async () => {
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed', apiKey: API_KEY });
    fake.script.push({ status: 401, body: '{"error":{"message":"Incorrect API key provided: sk-test-*****cdef."}}' });
    const error = (await embedder.embed({ texts: ['x'] }).catch((caught: unknown) => caught)) as Error;
    expect(error.message).toMatch(/HTTP 401/);
    expect(error.message).not.toMatch(/sk-/);
    expect(error.message).not.toContain('cdef');
  });

  it('retries 503 and 429 (honouring Retry-After) and then succeeds', async () => {
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed', maxRetries: 2 });
    fake.seen.length = 0;
    fake.script.push({ status: 503, body: 'loading model' }, { status: 429, body: '{}', headers: { 'retry-after': '0' } });
    const [vector] = await embedder.embed({ texts: ['hello'] });
    expect(vector).toHaveLength(32);
    expect(fake.seen).toHaveLength(3);
  });

  it('gives up after maxRetries', async () => {
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed', maxRetries: 1 });
    fake.seen.length = 0;
    fake.script.push({ status: 503, body: 'a' }, { status: 503, body: 'b' }, { status: 503, body: 'c' });
    await expect(embedder.embed({ texts: ['hello'] })).rejects.toThrow(/HTTP 503: b/);
    expect(fake.seen).toHaveLength(2);
  });

  it('times out a request that takes longer than timeoutMs', async () => {
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed', timeoutMs: 100 });
    fake.script.push({ delayMs: 400 });
    await expect(embedder.embed({ texts: ['slow'] })).rejects.toThrow(/no answer within 100 ms/);
  });

  it('rejects malformed answers and unreachable servers with a clear error', async () => {
    const embedder = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed' });
    fake.script.push({ status: 200, body: '{"data":[{"index":0,"embedding":"nope"}]}' });
    await expect(embedder.embed({ texts: ['x'] })).rejects.toThrow(/not an OpenAI embeddings response/);
    fake.script.push({ status: 200, body: '{"data":[]}' });
    await expect(embedder.embed({ texts: ['x'] })).rejects.toThrow(/0 embeddings for 1 inputs/);

    const closed = createOpenAiEmbedder({ baseUrl: 'http://127.0.0.1:9', model: 'm', maxRetries: 0 });
    await expect(closed).rejects.toThrow(/embedding request to http:\/\/127\.0\.0\.1:9\/v1\/embeddings .*failed: fetch failed/);
  });

  it('validates its options', async () => {
    await expect(createOpenAiEmbedder({ baseUrl: 'not a url', model: 'm' })).rejects.toThrow();
    await expect(createOpenAiEmbedder({ baseUrl, model: '' })).rejects.toThrow();
    await expect(createOpenAiEmbedder({ baseUrl, model: 'm', verify: false })).rejects.toThrow(/dimensions is required/);
    await expect(createOpenAiEmbedder({ baseUrl, model: 'm', requestDimensions: true })).rejects.toThrow(/needs dimensions/);
    await expect(createOpenAiEmbedder({ baseUrl, model: 'm', batchSize: 0 })).rejects.toThrow();
    const lazy = await createOpenAiEmbedder({ baseUrl, model: 'fake-embed', verify: false, dimensions: 32 });
    expect(fake.seen).toHaveLength(0);
    expect(lazy.id).toBe('openai:fake-embed@32');
  });
});
