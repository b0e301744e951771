import { isDeepStrictEqual } from 'node:util';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { InputError } from '../errors.js';
import { OFF_THREAD_JSON_BYTES, readJsonBody } from './json-body.js';
import { createJsonParsePool } from './json-parse-pool.js';
import { MAX_JSON_ARRAY_ELEMENTS, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from './json-text.js';

const pool = createJsonParsePool();
afterAll(() => pool.close());
afterEach(() => vi.restoreAllMocks());

/** `bytes` as a request body in chunks of at most 64 KiB, like a socket delivers it. */
async function* chunked(bytes: Uint8Array) {
  for (let offset = 0; offset < bytes.byteLength; offset += 65_536) yield bytes.subarray(offset, offset + 65_536);
}

/** What `readJsonBody` gives for `bytes`: the value, or the error's class, status, code, message and details. */
async function outcomeOf(bytes: Uint8Array, withPool: boolean, limitBytes = 1_048_576) {
  try {
    const value = await readJsonBody({
      contentType: 'application/json',
      contentLength: String(bytes.byteLength),
      chunks: chunked(bytes),
      limitBytes,
      ...(withPool ? { pool } : {}),
    });
    return { value };
  } catch (error) {
    const { status, code, message, details } = error as InputError;
    return { error: { name: (error as Error).constructor.name, status, code, message, details } };
  }
}

/** `text` as UTF-8 padded with trailing spaces to over the off-thread threshold. */
const large = (text: string) => Buffer.from(text.padEnd(OFF_THREAD_JSON_BYTES + 1_000, ' '));
const nested = (depth: number) => `${'['.repeat(depth)}0${']'.repeat(depth)}`;

const cases: Array<[string, Uint8Array]> = [
  ['an object of strings', Buffer.from(JSON.stringify({ text: 'x'.repeat(OFF_THREAD_JSON_BYTES), accents: 'héllo ✓ 𝄞' }))],
  ['an array of objects', Buffer.from(JSON.stringify(Array.from({ length: 3_000 }, (_, id) => ({ id, name: `n${id}`, tags: ['a'] }))))],
  ['own __proto__ and constructor keys', large('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"s":"\\u0001"}')],
  ['a NUL escape', large('{"s":"a\\u0000b"}')],
  ['-0, big and small numbers', large('[-0, 1e308, 5e-324, 12345678901234567890, true, null, "\\ud83d\\ude00"]')],
  ['a scalar', large('"just a string"')],
  ['a leading byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), large('{"bom":true}')])],
  ['only white space', large('')],
  ['only a byte order mark and white space', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), large('')])],
  ['invalid UTF-8', Buffer.concat([large('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')])],
  ['a truncated UTF-8 sequence at the end', Buffer.concat([large('"x"'), Buffer.from([0xe2, 0x82])])],
  [`nesting of ${MAX_JSON_DEPTH} levels`, large(nested(MAX_JSON_DEPTH))],
  [`nesting of ${MAX_JSON_DEPTH + 1} levels`, large(nested(MAX_JSON_DEPTH + 1))],
  ['nesting 200,000 deep', Buffer.from(nested(200_000))],
  [`${MAX_JSON_CONTAINERS} containers`, large(`[${'{},'.repeat(MAX_JSON_CONTAINERS - 2)}[]]`)],
  [`${MAX_JSON_CONTAINERS + 1} containers`, large(`[${'{},'.repeat(MAX_JSON_CONTAINERS - 1)}[]]`)],
  ['too deep and not JSON (depth is checked first)', large(`${'['.repeat(MAX_JSON_DEPTH + 1)}nope`)],
  ['too many containers and not JSON', large(`[${'[],'.repeat(MAX_JSON_CONTAINERS)}`)],
  [`${MAX_JSON_MEMBERS} object members`, Buffer.from(`{${Array.from({ length: MAX_JSON_MEMBERS }, (_, i) => `"k${i}":1`).join(',')}}`)],
  [
    `${MAX_JSON_MEMBERS + 1} object members`,
    Buffer.from(`{${Array.from({ length: MAX_JSON_MEMBERS + 1 }, (_, i) => `"k${i}":1`).join(',')}}`),
  ],
  ['colons inside strings', large(JSON.stringify({ s: ':'.repeat(MAX_JSON_MEMBERS + 1) }))],
  [`${MAX_JSON_ARRAY_ELEMENTS} array elements`, Buffer.from(`[${Array(MAX_JSON_ARRAY_ELEMENTS).fill('0').join(',')}]`)],
  [
    `${MAX_JSON_ARRAY_ELEMENTS + 1} array elements`,
    Buffer.from(
      `[${Array(MAX_JSON_ARRAY_ELEMENTS + 1)
        .fill('0')
        .join(',')}]`,
    ),
  ],
  [
    `${MAX_JSON_ARRAY_ELEMENTS + 1} array elements in nested arrays, spaced`,
    large(
      `{"a": [ [ ${Array(MAX_JSON_ARRAY_ELEMENTS / 2)
        .fill('1')
        .join(' , ')} ] ,\n[${Array(MAX_JSON_ARRAY_ELEMENTS / 2 - 1)
        .fill('"x"')
        .join(',')}] ] }`,
    ),
  ],
  ['commas inside strings and objects', large(JSON.stringify({ s: ','.repeat(MAX_JSON_ARRAY_ELEMENTS + 1), o: { a: [], b: [1] } }))],
  ['not UTF-8 and too deep (UTF-8 is checked first)', Buffer.concat([large(nested(100)), Buffer.from([0xff])])],
  ['a lone surrogate escape', large('{"a":"\\ud800x"}')],
  ['a surrogate pair escape and an escaped backslash before u', large('{"a":"\\ud83d\\ude00","b":"\\\\udc00"}')],
  ['not JSON', large('{"a": 1,}')],
  ['two values', large('{} {}')],
  ['a byte order mark in the middle', large('{"a":1}\ufeff')],
];

describe('readJsonBody off the event loop', () => {
  it.each(cases)('gives the same value or error as in-thread parsing for %s', async (_name, bytes) => {
    expect(bytes.byteLength).toBeGreaterThanOrEqual(OFF_THREAD_JSON_BYTES);
    const inThread = await outcomeOf(bytes, false);
    const offThread = await outcomeOf(bytes, true);
    expect(offThread).toEqual(inThread);
    // Node's strict comparison also tells -0 from 0 and checks prototypes, and unlike vitest's it does not read an own `constructor` key.
    expect(isDeepStrictEqual(offThread, inThread)).toBe(true);
  });

  it('refuses each case with the error of its first failed check', async () => {
    const errors = await Promise.all(cases.map(async ([name, bytes]) => [name, (await outcomeOf(bytes, true)).error] as const));
    const byName = Object.fromEntries(errors);
    expect(byName['invalid UTF-8']).toEqual({
      name: 'InputError',
      status: 400,
      code: 'invalid_request',
      message: 'The request body is not valid UTF-8.',
      details: undefined,
    });
    expect(byName['not UTF-8 and too deep (UTF-8 is checked first)']?.message).toBe('The request body is not valid UTF-8.');
    expect(byName['too deep and not JSON (depth is checked first)']?.details).toEqual({ max_depth: MAX_JSON_DEPTH });
    expect(byName['too many containers and not JSON']?.details).toEqual({ max_containers: MAX_JSON_CONTAINERS });
    expect(byName['not JSON']?.message).toBe('The request body is not valid JSON.');
    expect(byName['a lone surrogate escape']?.message).toMatch(/lone UTF-16 surrogate/);
    expect(byName['a NUL escape']?.message).toMatch(/NUL character/);
    expect(byName['a surrogate pair escape and an escaped backslash before u']).toBeUndefined();
    expect(byName['only white space']).toBeUndefined();
    expect(byName[`${MAX_JSON_CONTAINERS} containers`]).toBeUndefined();
    expect(byName[`${MAX_JSON_MEMBERS + 1} object members`]?.details).toEqual({ max_members: MAX_JSON_MEMBERS });
    expect(byName[`${MAX_JSON_MEMBERS} object members`]).toBeUndefined();
    expect(byName['colons inside strings']).toBeUndefined();
    expect(byName[`${MAX_JSON_ARRAY_ELEMENTS} array elements`]).toBeUndefined();
    const elements = { max_array_elements: MAX_JSON_ARRAY_ELEMENTS };
    expect(byName[`${MAX_JSON_ARRAY_ELEMENTS + 1} array elements`]?.details).toEqual(elements);
    expect(byName[`${MAX_JSON_ARRAY_ELEMENTS + 1} array elements in nested arrays, spaced`]?.details).toEqual(elements);
    expect(byName['commas inside strings and objects']).toBeUndefined();
  });

  it('refuses a 1 MiB flat array of numbers without calling JSON.parse on it', async () => {
    const body = Buffer.from(`[${Array(520_000).fill('0').join(',')}]`);
    const parse = vi.spyOn(JSON, 'parse');
    const outcome = await outcomeOf(body, false);
    expect(outcome.error?.details).toEqual({ max_array_elements: MAX_JSON_ARRAY_ELEMENTS });
    expect(parse.mock.calls.filter(([text]) => typeof text === 'string' && text.length > 100_000)).toHaveLength(0);
  });

  it('answers 413 and 415 before anything is parsed, with or without the pool', async () => {
    const parse = vi.spyOn(pool, 'parse');
    const body = large('{}');
    expect((await outcomeOf(body, true, OFF_THREAD_JSON_BYTES)).error?.status).toBe(413);
    const asText = readJsonBody({ contentType: 'text/plain', contentLength: undefined, chunks: chunked(body), limitBytes: 2e6, pool });
    await expect(asText).rejects.toMatchObject({ status: 415, code: 'unsupported_media_type' });
    expect(parse).not.toHaveBeenCalled();
  });

  it('parses a body under the threshold on the event loop, and one at the threshold in the pool', async () => {
    const parse = vi.spyOn(pool, 'parse');
    const small = Buffer.from(JSON.stringify({ text: 'x'.repeat(OFF_THREAD_JSON_BYTES - 20) }));
    expect(small.byteLength).toBeLessThan(OFF_THREAD_JSON_BYTES);
    expect(await outcomeOf(small, true)).toStrictEqual(await outcomeOf(small, false));
    expect(parse).not.toHaveBeenCalled();
    const atThreshold = Buffer.from(JSON.stringify({ text: 'x'.repeat(OFF_THREAD_JSON_BYTES - 11) }));
    expect(atThreshold.byteLength).toBe(OFF_THREAD_JSON_BYTES);
    await outcomeOf(atThreshold, true);
    expect(parse).toHaveBeenCalledTimes(1);
  });

  it('keeps the event loop turning while a multi-MB body parses, and never calls JSON.parse on it', async () => {
    const body = Buffer.from(JSON.stringify(Array.from({ length: 9_000 }, (_, id) => ({ id, text: 'héllo wörld '.repeat(60) }))));
    expect(body.byteLength).toBeGreaterThan(6_000_000);
    await outcomeOf(large('{}'), true);
    const parse = vi.spyOn(JSON, 'parse');
    let turns = 0;
    let done = false;
    const spin = () => {
      turns++;
      if (!done) setImmediate(spin);
    };
    setImmediate(spin);
    const result = await outcomeOf(body, true, 8_000_000);
    done = true;
    const bodyParses = parse.mock.calls.filter(([text]) => typeof text === 'string' && text.length > 1_000_000);
    expect(bodyParses).toHaveLength(0);
    expect(turns).toBeGreaterThan(3);
    expect((result.value as unknown[]).length).toBe(9_000);
  });
});
