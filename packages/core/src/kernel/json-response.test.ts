import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { encodeJson, jsonResponse } from './json-response.js';

const text = async (value: unknown) => Buffer.concat((await encodeJson(value)).chunks).toString('utf8');

/** 100 records of 32 KB each, like a /mem/query answer with k = 100 (about 3.3 MB of JSON). */
const largeAnswer = {
  hits: Array.from({ length: 100 }, (_, index) => ({ id: `mem_${index}`, text: `${'é'.repeat(16_000)}${index}`, score: index / 100 })),
};

describe('encodeJson', () => {
  it('writes exactly what JSON.stringify writes', async () => {
    const nullPrototype = Object.assign(Object.create(null) as object, { a: 1 });
    const values: unknown[] = [
      { a: 1, b: undefined, c: () => 1, d: [undefined, () => 1, Symbol('s'), 2], sparse: new Array(3), e: 'quote " and \\ and \n' },
      { deep: { deeper: { deepest: { bottom: [1, { x: undefined }] } } } },
      { when: new Date(0), custom: { toJSON: () => 'custom' }, list: Object.assign([1, 2], { toJSON: () => 'list' }) },
      { nullPrototype, empty: {}, none: [], unicode: '😀 ü \u2028', number: Number.NaN, big: 1e300 },
      [{ only: undefined }, [], [[[[]]]]],
      'plain string',
      42,
      null,
    ];
    for (const value of values) expect(await text(value)).toBe(JSON.stringify(value));
    expect((await encodeJson(undefined)).chunks).toEqual([]);
  });

  it('encodes a large answer in 64 KiB chunks, giving the event loop turns while it works', async () => {
    const immediate = new Promise<boolean>((resolve) => setImmediate(() => resolve(true)));
    let settled = false;
    const encoding = encodeJson(largeAnswer).finally(() => (settled = true));
    const turnedBeforeDone = await Promise.race([immediate, encoding.then(() => false)]);
    const { chunks, bytes } = await encoding;
    expect(turnedBeforeDone).toBe(true);
    expect(settled).toBe(true);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(64 * 1024);
    expect(bytes).toBe(Buffer.byteLength(JSON.stringify(largeAnswer)));
    expect(Buffer.concat(chunks).toString('utf8')).toBe(JSON.stringify(largeAnswer));
  });

  it('throws what JSON.stringify throws', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = { again: cyclic };
    await expect(encodeJson({ list: [cyclic] })).rejects.toThrow(TypeError);
    await expect(encodeJson({ n: 1n })).rejects.toThrow(TypeError);
  });
});

describe('jsonResponse', () => {
  const app = new Hono();
  app.get('/small', (c) => jsonResponse(c, { ok: true }, 201));
  app.get('/large', (c) => jsonResponse(c, largeAnswer, 200));

  it('answers like c.json: same body, content type and length, streamed when large', async () => {
    const expected = new Hono().get('/', (c) => c.json({ ok: true }, 201));
    const [small, reference] = [await app.request('/small'), await expected.request('/')];
    expect(small.status).toBe(201);
    expect(small.headers.get('content-type')).toBe(reference.headers.get('content-type'));
    expect(await small.text()).toBe(await reference.text());
    expect(small.headers.get('content-length')).toBe('11');

    const large = await app.request('/large');
    expect(large.body).toBeInstanceOf(ReadableStream);
    expect(large.headers.get('content-length')).toBe(String(Buffer.byteLength(JSON.stringify(largeAnswer))));
    expect(await large.json()).toEqual(largeAnswer);
  });

  it('sends answers near the small-answer bound as c.json does, byte lengths included', async () => {
    const hit = (index: number) => ({
      id: `mem_${index}`,
      text: `note ${index} ${'é'.repeat(150)}`,
      score: 1 / (index + 1),
      scope: ['self'],
    });
    const answers: unknown[] = [
      { hits: Array.from({ length: 10 }, (_, index) => hit(index)) },
      { hits: Array.from({ length: 30 }, (_, index) => hit(index)) },
      { a: { b: { c: { d: { e: { f: { g: 'deep' } } } } } }, when: new Date(0), custom: { toJSON: () => 'custom' } },
      [[[[[[[]]]]]]],
      { id: 'mem_1', n: -1.7976931348623157e308, ok: false, none: null, gone: undefined, text: 'é\u0000"\\\n🙂' },
      ['a', 1, null, undefined],
      { text: 'x'.repeat(2_700) },
      { text: '\u0001'.repeat(2_700) },
      { text: 'x'.repeat(20_000) },
      {},
      [],
    ];
    for (const answer of answers) {
      const route = new Hono().get('/', (c) => jsonResponse(c, answer, 200));
      const response = await route.request('/');
      const text = JSON.stringify(answer);
      expect(await response.text()).toBe(text);
      expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
      expect(response.headers.get('content-type')).toBe('application/json');
    }
  });
});
