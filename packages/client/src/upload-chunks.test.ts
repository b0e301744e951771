import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentInfraClient } from './index.js';
import { seedAgent } from './test-support/agent.js';
import { failureOf } from './test-support/failure-of.js';
import { startServer, type TestServer } from './test-support/serve.js';

/** An async iterable yielding `chunks` as they are, whatever their type (as an object-mode Node stream may). */
async function* yielding(...chunks: unknown[]): AsyncIterable<Uint8Array> {
  for (const chunk of chunks) yield chunk as Uint8Array;
}

// Review: a stream yielding strings or object-mode values counted each chunk as 0 bytes (a number n as n zero bytes), so
// text failed with "data holds 0 bytes" after /register, and { n: 1 } or 7 went up as zeros.
describe('artifacts.upload reads a stream’s chunks as bytes: strings as UTF-8, anything else refused', () => {
  let server: TestServer;
  let alice: AgentInfraClient;

  beforeAll(async () => {
    server = await startServer();
    ({ agent: alice } = await seedAgent(server.url, 'alice'));
  }, 60_000);
  afterAll(() => server?.stop());

  /** The artifacts registered under `keys`, with their status. */
  async function registered(...keys: string[]): Promise<Array<{ key: string; status: string }>> {
    const { artifacts } = await alice.artifacts.list({ agent_id: 'alice' });
    return artifacts.filter(({ key }) => keys.includes(key)).map(({ key, status }) => ({ key, status }));
  }

  async function download(artifactId: string): Promise<Buffer> {
    const parts: Uint8Array[] = [];
    for await (const part of (await alice.artifacts.stream({ artifact_id: artifactId })) as unknown as AsyncIterable<Uint8Array>)
      parts.push(part);
    return Buffer.concat(parts);
  }

  it('uploads strings from an object-mode Node stream and a web stream as their UTF-8 bytes, counted as such', async () => {
    const text = ['grüße ', 'from ', '東京\n'];
    const bytes = Buffer.from(text.join(''), 'utf8');
    expect(bytes.byteLength).toBeGreaterThan(text.join('').length);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const sources = [
      { key: 'text/node.txt', data: Readable.from(text) },
      { key: 'text/web.txt', data: ReadableStream.from(text) },
      { key: 'text/mixed.txt', data: yielding(Buffer.from(text[0]!), text[1], new TextEncoder().encode(text[2]).buffer) },
    ];
    for (const { key, data } of sources) {
      const committed = await alice.artifacts.upload({ agent_id: 'alice', key, mime: 'text/plain', data, size: bytes.byteLength });
      expect(committed).toMatchObject({ status: 'committed', size: bytes.byteLength, sha256 });
      expect(await download(committed.artifact_id)).toEqual(bytes);
    }
  });

  it('refuses a first chunk that is neither bytes nor a string with invalid_request naming data, before registering', async () => {
    for (const [key, chunk] of [
      ['object.bin', { n: 1 }],
      ['number.bin', 7],
      ['null.bin', null],
    ] as const) {
      const error = await failureOf(
        alice.artifacts.upload({ agent_id: 'alice', key, mime: 'application/octet-stream', data: yielding(chunk), size: 7 }),
      );
      expect(error).toMatchObject({ status: 0, code: 'invalid_request', details: { fields: [{ path: 'data' }] } });
      expect(error.message).toMatch(
        /^data yielded .* as chunk 1: a stream's chunks must be bytes \(Uint8Array, Buffer, ArrayBuffer\) or strings/,
      );
    }
    expect(await registered('object.bin', 'number.bin', 'null.bin')).toEqual([]);
  });

  it('fails a later chunk that is not bytes during the PUT, committing nothing', async () => {
    const error = await failureOf(
      alice.artifacts.upload({
        agent_id: 'alice',
        key: 'late.bin',
        mime: 'application/octet-stream',
        data: yielding(new Uint8Array([1, 2]), { n: 1 }),
        size: 4,
      }),
    );
    expect(error).toMatchObject({ status: 0, code: 'invalid_request', details: { fields: [{ path: 'data' }] } });
    expect(error.message).toMatch(/^data yielded an object as chunk 2: /);
    expect(await registered('late.bin')).toEqual([{ key: 'late.bin', status: 'pending' }]);
  });
});
