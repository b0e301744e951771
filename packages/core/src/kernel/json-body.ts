import { InputError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import type { JsonParsePool } from './json-parse-pool.js';
import {
  type JsonTextFailure,
  type JsonTextOutcome,
  MAX_JSON_ARRAY_ELEMENTS,
  MAX_JSON_CONTAINERS,
  MAX_JSON_DEPTH,
  MAX_JSON_MEMBERS,
  parseJsonBytes,
} from './json-text.js';

export { MAX_JSON_ARRAY_ELEMENTS, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from './json-text.js';

/**
 * Bodies of at least this many bytes are parsed in the JSON parse pool when
 * the caller has one (issue #11). Measured on Node 20, 2 shared cores, as the
 * event loop's busy time per body: up to 64 KiB, the round trip to a thread
 * costs it as much as decoding, checking and parsing there (0.05–0.5 ms);
 * from 128 KiB to 1 MiB of text, the pool path costs 0.1–0.7 ms against
 * 0.4–3 ms; for thousands of small objects it saves ~20%, because rebuilding
 * the value from its structured clone costs about what `JSON.parse` does.
 */
export const OFF_THREAD_JSON_BYTES = 64 * 1024;

/**
 * Whether a `content-type` header names JSON: `application/json`, with an
 * optional `charset=utf-8` parameter (RFC 8259 §8.1: JSON is UTF-8).
 */
export function isJsonMediaType(header: string | undefined): boolean {
  if (!header) return false;
  if (header === 'application/json') return true;
  const [type, ...parameters] = header.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return parameters.every((parameter) => {
    const [name, value] = parameter.split('=').map((part) => part.trim().replace(/^"(.*)"$/, '$1'));
    return name !== 'charset' || value === 'utf-8' || value === 'utf8';
  });
}

/** Where a JSON body comes from and what it may be. */
export interface JsonBodySource {
  /** The request's `content-type` header. */
  contentType: string | undefined;
  /** The request's `content-length` header. */
  contentLength: string | undefined;
  /** The request's `content-encoding` header: bodies are read as sent, so any coding but `identity` is refused. */
  contentEncoding?: string | undefined;
  /** The body as byte chunks. */
  chunks: AsyncIterable<Uint8Array>;
  /** Largest body in bytes. */
  limitBytes: number;
  /** Parses bodies of {@link OFF_THREAD_JSON_BYTES} or more off the event loop; without it every body is parsed on it. */
  pool?: JsonParsePool;
}

/** The error each failed check of {@link parseJsonBytes} answers with. */
const refusals: Record<JsonTextFailure, () => InputError> = {
  not_utf8: () => new InputError('The request body is not valid UTF-8.'),
  too_deep: () =>
    new InputError(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`, {
      max_depth: MAX_JSON_DEPTH,
    }),
  too_many_containers: () =>
    new InputError(`The request body holds more than ${MAX_JSON_CONTAINERS} arrays and objects.`, {
      max_containers: MAX_JSON_CONTAINERS,
    }),
  too_many_members: () =>
    new InputError(`The request body holds more than ${MAX_JSON_MEMBERS} object members.`, {
      max_members: MAX_JSON_MEMBERS,
    }),
  too_many_array_elements: () =>
    new InputError(`The request body holds more than ${MAX_JSON_ARRAY_ELEMENTS} array elements in all.`, {
      max_array_elements: MAX_JSON_ARRAY_ELEMENTS,
    }),
  lone_surrogate: () =>
    new InputError(
      'The request body escapes a lone UTF-16 surrogate (such as "\\ud800"), which is not Unicode text; send text as UTF-8 or as surrogate pairs.',
    ),
  nul_character: () => new InputError('The request body holds a NUL character ("\\u0000") in a string, which no text field can store.'),
  not_json: () => new InputError('The request body is not valid JSON.'),
};

/** `chunks` copied into one view of a new `SharedArrayBuffer` of `size` bytes, which a parse thread reads without a copy. */
function sharedConcat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const bytes = new Uint8Array(new SharedArrayBuffer(size));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Reads and parses a JSON request body, checking in this order, each before
 * any work the next would do:
 * - a declared `content-length` over the limit: 413, nothing read;
 * - a `content-encoding` other than `identity` (RFC 9110 §8.4: the server
 *   does not decode bodies): 415, nothing read;
 * - a non-empty body whose `content-type` is not JSON: 415;
 * - more than `limitBytes` bytes: 413, reading stops at the limit;
 * - bytes that are not UTF-8: 400;
 * - nesting deeper than {@link MAX_JSON_DEPTH}, more than
 *   {@link MAX_JSON_CONTAINERS} arrays and objects, more than
 *   {@link MAX_JSON_MEMBERS} object members, or more than
 *   {@link MAX_JSON_ARRAY_ELEMENTS} array elements: 400;
 * - text that is not JSON: 400.
 * An empty body (no bytes, or only white space) is `{}` whatever its content type.
 * The first three checks run on the event loop as the chunks arrive. The
 * others (decoding, the shape check and `JSON.parse`) run there too for a
 * body under {@link OFF_THREAD_JSON_BYTES} bytes, or when `source.pool` is
 * not given. A body of that size or more is copied once into shared memory
 * and parsed by a pool thread, which sends the value back as a structured
 * clone. Both paths give the same value or the same error.
 * @throws PayloadTooLargeError, UnsupportedMediaTypeError, InputError
 */
export async function readJsonBody(source: JsonBodySource): Promise<unknown> {
  const tooLarge = () => new PayloadTooLargeError(`The request body is over ${source.limitBytes} bytes.`);
  if (Number(source.contentLength) > source.limitBytes) throw tooLarge();
  const coding = source.contentEncoding?.trim().toLowerCase();
  if (coding && coding !== 'identity') {
    throw new UnsupportedMediaTypeError(`Send the body uncompressed: content-encoding ${JSON.stringify(coding)} is not supported.`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source.chunks) {
    size += chunk.byteLength;
    if (size > source.limitBytes) throw tooLarge();
    if (chunks.length === 0 && chunk.byteLength > 0 && !isJsonMediaType(source.contentType)) {
      throw new UnsupportedMediaTypeError('Send the body as JSON with the header content-type: application/json.');
    }
    chunks.push(chunk);
  }
  const outcome: JsonTextOutcome =
    source.pool && size >= OFF_THREAD_JSON_BYTES
      ? await source.pool.parse(sharedConcat(chunks, size))
      : parseJsonBytes(Buffer.concat(chunks, size));
  if (!outcome.ok) throw refusals[outcome.failure]();
  return outcome.value;
}
