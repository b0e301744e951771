import { InputError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';

/**
 * Deepest nesting of arrays and objects a JSON request body may have. Every
 * request schema is at most a few levels deep; 32 leaves room for nested
 * JSON values (kv values, settings) and refuses the thousands-deep bodies
 * that overflow the stack of recursive validators (#11).
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Most arrays and objects a JSON request body may hold in all. A 1 MiB body
 * can hold ~190,000 of them, which `JSON.parse` and the validators after it
 * take 13–32 ms each to walk on the event loop (bench/worst-case.ts: eight
 * such bodies at once stalled every other request for half a second). No
 * request schema needs more than a few hundred; 10,000 leaves room for kv
 * values and settings of a few thousand records (#11).
 */
export const MAX_JSON_CONTAINERS = 10_000;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Whether a `content-type` header names JSON: `application/json`, with an
 * optional `charset=utf-8` parameter (RFC 8259 §8.1: JSON is UTF-8).
 */
export function isJsonMediaType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...parameters] = header.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return parameters.every((parameter) => {
    const [name, value] = parameter.split('=').map((part) => part.trim().replace(/^"(.*)"$/, '$1'));
    return name !== 'charset' || value === 'utf-8' || value === 'utf8';
  });
}

/**
 * The nesting depth of a JSON text (0 for a scalar, 1 for `[]` or `{}`) and
 * its number of arrays and objects, counted in one pass without parsing,
 * stopping as soon as either limit is passed. Brackets inside strings do not
 * count.
 * @returns `depth` (or `maxDepth + 1` when deeper) and `containers` (or
 *   `maxContainers + 1` when more).
 */
export function jsonShape(text: string, limits: { maxDepth: number; maxContainers: number }): { depth: number; containers: number } {
  let depth = 0;
  let deepest = 0;
  let containers = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      depth++;
      containers++;
      if (containers > limits.maxContainers) return { depth: deepest, containers };
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limits.maxDepth) return { depth: deepest, containers };
      }
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return { depth: deepest, containers };
}

/** Where a JSON body comes from and what it may be. */
export interface JsonBodySource {
  /** The request's `content-type` header. */
  contentType: string | undefined;
  /** The request's `content-length` header. */
  contentLength: string | undefined;
  /** The body as byte chunks. */
  chunks: AsyncIterable<Uint8Array>;
  /** Largest body in bytes. */
  limitBytes: number;
}

/**
 * Reads and parses a JSON request body, checking in this order, each before
 * any work the next would do:
 * - a declared `content-length` over the limit: 413, nothing read;
 * - a non-empty body whose `content-type` is not JSON: 415;
 * - more than `limitBytes` bytes: 413, reading stops at the limit;
 * - bytes that are not UTF-8: 400;
 * - nesting deeper than {@link MAX_JSON_DEPTH}, or more than
 *   {@link MAX_JSON_CONTAINERS} arrays and objects: 400;
 * - text that is not JSON: 400.
 * An empty body (no bytes, or only white space) is `{}` whatever its content type.
 * @throws PayloadTooLargeError, UnsupportedMediaTypeError, InputError
 */
export async function readJsonBody(source: JsonBodySource): Promise<unknown> {
  const tooLarge = () => new PayloadTooLargeError(`The request body is over ${source.limitBytes} bytes.`);
  if (Number(source.contentLength) > source.limitBytes) throw tooLarge();
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
  let text: string;
  try {
    text = utf8.decode(Buffer.concat(chunks, size));
  } catch {
    throw new InputError('The request body is not valid UTF-8.');
  }
  if (text.trim() === '') return {};
  const shape = jsonShape(text, { maxDepth: MAX_JSON_DEPTH, maxContainers: MAX_JSON_CONTAINERS });
  if (shape.depth > MAX_JSON_DEPTH) {
    throw new InputError(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`, {
      max_depth: MAX_JSON_DEPTH,
    });
  }
  if (shape.containers > MAX_JSON_CONTAINERS) {
    throw new InputError(`The request body holds more than ${MAX_JSON_CONTAINERS} arrays and objects.`, {
      max_containers: MAX_JSON_CONTAINERS,
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InputError('The request body is not valid JSON.');
  }
}
