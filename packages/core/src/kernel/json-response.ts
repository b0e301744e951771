import type { Context } from 'hono';
import { nextIoTurn } from './io-turn.js';

/** Nesting levels of plain arrays and objects the encoder walks into; values deeper down are stringified whole. */
const WALK_DEPTH = 3;
/** Bytes of one chunk of the encoded body (and of one socket write when it is streamed). */
const CHUNK_BYTES = 64 * 1024;
/** The encoder yields to the event loop after this many milliseconds or bytes since its last yield. */
const SLICE_MS = 4;
const SLICE_BYTES = 512 * 1024;
/** Answers of at most this many characters (counted at their longest by {@link charactersLeft}) skip the sliced encoder. */
const SMALL_ANSWER_CHARS = 16 * 1024;
/** Nesting levels {@link charactersLeft} walks (a /mem/query hit's `scope` is on the fourth). */
const SMALL_ANSWER_DEPTH = 6;

/** Whether `value` is an array or an object that `JSON.stringify` writes member by member (no `toJSON`, plain prototype). */
function walkable(value: unknown): value is Record<string, unknown> | unknown[] {
  if (typeof value !== 'object' || value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Pieces of JSON text whose concatenation is exactly `JSON.stringify(value)`:
 * plain arrays and objects down to `depth` levels are written member by
 * member (so a list of large records becomes one piece per record), anything
 * deeper or not plain in one piece. `undefined` at the top yields nothing.
 */
function* jsonPieces(value: unknown, depth: number): Generator<string> {
  if (depth === 0 || !walkable(value)) {
    const text = JSON.stringify(value) as string | undefined;
    if (text !== undefined) yield text;
    return;
  }
  if (Array.isArray(value)) {
    yield '[';
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) yield ',';
      let empty = true;
      for (const piece of jsonPieces(value[index], depth - 1)) {
        empty = false;
        yield piece;
      }
      if (empty) yield 'null';
    }
    yield ']';
    return;
  }
  yield '{';
  let first = true;
  for (const [key, member] of Object.entries(value)) {
    const pieces = jsonPieces(member, depth - 1);
    const head = pieces.next();
    if (head.done) continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:${head.value}`;
    first = false;
    yield* pieces;
  }
  yield '}';
}

/**
 * `JSON.stringify(value)` as UTF-8 chunks of at most 64 KiB, encoded in
 * slices: the encoder lets the event loop poll for I/O ({@link nextIoTurn})
 * after every 4 ms or 512 KiB of output, so a multi-megabyte answer (e.g. 100
 * memories of 32 KB) never holds it for the whole encoding (#11). A single member larger than a
 * slice (one long string) is still encoded in one go.
 * @returns the chunks and their total length in bytes; no chunks for `undefined`.
 * @throws TypeError as `JSON.stringify` does (cycles, BigInt).
 */
export async function encodeJson(value: unknown): Promise<{ chunks: Buffer<ArrayBuffer>[]; bytes: number }> {
  const chunks: Buffer<ArrayBuffer>[] = [];
  let bytes = 0;
  let pending = '';
  let sliceStarted = performance.now();
  let sliceBytes = 0;
  const flush = () => {
    // Buffer.from(string) is always backed by an ArrayBuffer (its pool or its own).
    const encoded = Buffer.from(pending, 'utf8') as Buffer<ArrayBuffer>;
    pending = '';
    for (let offset = 0; offset < encoded.length; offset += CHUNK_BYTES) chunks.push(encoded.subarray(offset, offset + CHUNK_BYTES));
    bytes += encoded.length;
    sliceBytes += encoded.length;
  };
  for (const piece of jsonPieces(value, WALK_DEPTH)) {
    pending += piece;
    if (pending.length < CHUNK_BYTES) continue;
    flush();
    if (sliceBytes >= SLICE_BYTES || performance.now() - sliceStarted >= SLICE_MS) {
      await nextIoTurn();
      sliceStarted = performance.now();
      sliceBytes = 0;
    }
  }
  if (pending.length > 0) flush();
  return { chunks, bytes };
}

/**
 * The characters left of `left` once `JSON.stringify(value)` (plus one
 * separator) is paid for, counted at their longest, or a negative number as
 * soon as the budget is spent: a string costs 6 characters per code unit
 * (the longest escape) plus its quotes, any other scalar 25, a plain array or
 * object its brackets and its members (keys counted as strings), walked down
 * to `depth` levels; anything deeper or not plain (`toJSON`, class
 * instances) spends the whole budget. Stops at the first member that spends
 * it, so a large answer costs a few property reads.
 */
function charactersLeft(value: unknown, left: number, depth: number): number {
  if (typeof value === 'string') return left - value.length * 6 - 3;
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean') return left - 26;
  if (depth === 0 || !walkable(value)) return -1;
  let remaining = left - 3;
  if (Array.isArray(value)) {
    for (const member of value) {
      remaining = charactersLeft(member, remaining, depth - 1);
      if (remaining < 0) return remaining;
    }
    return remaining;
  }
  for (const key of Object.keys(value)) {
    remaining = charactersLeft(value[key], remaining - key.length * 6 - 3, depth - 1);
    if (remaining < 0) return remaining;
  }
  return remaining;
}

/**
 * The JSON response of a route (what `c.json(value, status)` sends: the same
 * bytes, `content-type: application/json` and a `content-length`). An
 * answer surely under ~16 KB (plain arrays and objects at most six levels
 * deep, strings counted at their longest escape) is one `JSON.stringify`,
 * as most route answers are; anything else is encoded
 * with {@link encodeJson}, and a body of more than one chunk is streamed one
 * 64 KiB chunk per socket write, waiting for the socket to drain in between,
 * instead of one multi-megabyte write.
 * @throws TypeError as `JSON.stringify` does.
 */
export async function jsonResponse(c: Context, value: unknown, status: number): Promise<Response> {
  const code = status as 200;
  if (charactersLeft(value, SMALL_ANSWER_CHARS, SMALL_ANSWER_DEPTH) >= 0) {
    // An answer of a few KB (most routes): one JSON.stringify, no slicing needed.
    const text = JSON.stringify(value);
    return c.body(text, code, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  }
  const { chunks, bytes } = await encodeJson(value);
  const headers = { 'content-type': 'application/json', 'content-length': String(bytes) };
  if (chunks.length <= 1) return c.body(chunks[0] ?? '', code, headers);
  let next = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next];
      next += 1;
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
  });
  return c.body(stream, code, headers);
}
