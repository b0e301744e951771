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

/**
 * Most object members a JSON request body may hold in all. A 1 MiB body can
 * hold ~150,000 (`"k1":1,`); 85,000 unknown keys took zod 27 ms on the event
 * loop to list before the body was refused, so eight such bodies at once
 * stalled every other request for a quarter of a second. A kv value, the
 * largest object any request carries, holds at most ~11,000 in its 64 KiB.
 */
export const MAX_JSON_MEMBERS = 20_000;

/**
 * Most array elements a JSON request body may hold in all arrays together.
 * A 1 MiB body can hold ~520,000 (`0,`), which `JSON.parse` takes ~20 ms
 * of the event loop to build (and the parse pool as long to hand back as a
 * structured clone), before any schema refuses them. The largest arrays a
 * request carries are a kv value's (at most ~32,800 elements in its default
 * 64 KiB) and a memory set's 1,000 ids; no route takes vectors in JSON.
 */
export const MAX_JSON_ARRAY_ELEMENTS = 50_000;

/** Why a body's bytes are not an acceptable JSON text, in the order they are checked. */
export type JsonTextFailure =
  | 'not_utf8'
  | 'too_deep'
  | 'too_many_containers'
  | 'too_many_members'
  | 'too_many_array_elements'
  | 'lone_surrogate'
  | 'nul_character'
  | 'not_json';

/** The parsed value of a body's bytes, or why they were refused. */
export type JsonTextOutcome = { ok: true; value: unknown } | { ok: false; failure: JsonTextFailure };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The UTF-16 code unit a `\uXXXX` escape at `text[at]` (the backslash) names, or −1 when `text[at]` does not start one. */
function unicodeEscape(text: string, at: number): number {
  if (text.charCodeAt(at) !== 0x5c || text.charCodeAt(at + 1) !== 0x75) return -1;
  const digits = text.slice(at + 2, at + 6);
  return /^[0-9a-fA-F]{4}$/.test(digits) ? Number.parseInt(digits, 16) : -1;
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** What {@link jsonShape} found. */
export interface JsonShape {
  /** Nesting depth, or `maxDepth + 1` when deeper. */
  depth: number;
  /** Arrays and objects, or `maxContainers + 1` when more. */
  containers: number;
  /** Object members (`:` outside strings), or `maxMembers + 1` when more. */
  members: number;
  /** Elements of all arrays, or `maxArrayElements + 1` when more. */
  arrayElements: number;
  /** Commas outside strings (array elements and object members after the first of each), counted up to where the pass stopped. */
  commas: number;
  /** A string escapes a lone UTF-16 surrogate. */
  loneSurrogate: boolean;
  /** A string escapes NUL (U+0000). */
  nulCharacter: boolean;
}

/** Whether `code` is JSON white space (RFC 8259 §2: space, tab, line feed, carriage return). */
const isJsonSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/**
 * The nesting depth of a JSON text (0 for a scalar, 1 for `[]` or `{}`), its
 * number of arrays and objects, of object members, of array elements and of commas, whether a string escapes NUL (`"\u0000"`:
 * PostgreSQL's text and jsonb cannot store it, so the same request would
 * succeed on SQLite and fail there) and whether a string escapes a lone UTF-16
 * surrogate (`"\ud800"`: `JSON.parse` accepts it, but it is not Unicode text,
 * and UTF-8 storage would replace it with U+FFFD, changing the value;
 * RFC 8259 §8.2). Counted in one pass without parsing, stopping as soon as a
 * limit is passed or a lone surrogate is found. Brackets, colons and commas inside
 * strings do not count.
 * @param limits.maxMembers object members to count at most (no limit when left out).
 * @param limits.maxArrayElements array elements to count at most (no limit when left out).
 * @returns see {@link JsonShape}.
 */
export function jsonShape(
  text: string,
  limits: { maxDepth: number; maxContainers: number; maxMembers?: number; maxArrayElements?: number },
): JsonShape {
  const maxMembers = limits.maxMembers ?? Number.POSITIVE_INFINITY;
  const maxArrayElements = limits.maxArrayElements ?? Number.POSITIVE_INFINITY;
  let depth = 0;
  let deepest = 0;
  let containers = 0;
  let members = 0;
  let arrayElements = 0;
  let commas = 0;
  let inString = false;
  /** 1 where the container open at that depth is an array (the pass stops before the depth passes maxDepth + 1). */
  const isArrayAt = new Uint8Array(limits.maxDepth + 2);
  /** An array was just opened: the next token that does not close it is its first element. */
  let arrayOpened = false;
  const shape = (found: { loneSurrogate?: boolean; nulCharacter?: boolean } = {}): JsonShape => ({
    depth: deepest,
    containers,
    members,
    arrayElements,
    commas,
    loneSurrogate: found.loneSurrogate ?? false,
    nulCharacter: found.nulCharacter ?? false,
  });
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) {
        const unit = unicodeEscape(text, index);
        if (unit === 0) return shape({ nulCharacter: true });
        if (isLowSurrogate(unit)) return shape({ loneSurrogate: true });
        if (isHighSurrogate(unit)) {
          if (!isLowSurrogate(unicodeEscape(text, index + 6))) return shape({ loneSurrogate: true });
          index += 11;
        } else index += unit === -1 ? 1 : 5;
      } else if (code === 0x22) inString = false;
      continue;
    }
    if (isJsonSpace(code)) continue;
    if (arrayOpened) {
      arrayOpened = false;
      if (code !== 0x5d && ++arrayElements > maxArrayElements) return shape();
    }
    if (code === 0x22) inString = true;
    else if (code === 0x2c) {
      commas++;
      if (isArrayAt[depth] === 1 && ++arrayElements > maxArrayElements) return shape();
    } else if (code === 0x3a) {
      members++;
      if (members > maxMembers) return shape();
    } else if (code === 0x5b || code === 0x7b) {
      depth++;
      containers++;
      if (containers > limits.maxContainers) return shape();
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limits.maxDepth) return shape();
      }
      isArrayAt[depth] = code === 0x5b ? 1 : 0;
      arrayOpened = code === 0x5b;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return shape();
}

/**
 * Decodes and parses a JSON body's bytes, checking in this order: UTF-8
 * (fatal; a leading byte order mark is dropped), nesting deeper than
 * {@link MAX_JSON_DEPTH}, more than {@link MAX_JSON_CONTAINERS} arrays and
 * objects, more than {@link MAX_JSON_MEMBERS} object members, more than
 * {@link MAX_JSON_ARRAY_ELEMENTS} array elements, a `\u` escape of a lone surrogate or of NUL, then JSON syntax. Text that is empty or only white space parses
 * as `{}`. Pure and synchronous, with no imports, so that the same code
 * runs on the event loop and in the parse thread (json-parse-pool.ts).
 * @param bytes the whole body; any view, including one over a `SharedArrayBuffer`.
 * @returns the value, or the first check it failed; never throws.
 */
export function parseJsonBytes(bytes: Uint8Array): JsonTextOutcome {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, failure: 'not_utf8' };
  }
  if (text.trim() === '') return { ok: true, value: {} };
  const shape = jsonShape(text, {
    maxDepth: MAX_JSON_DEPTH,
    maxContainers: MAX_JSON_CONTAINERS,
    maxMembers: MAX_JSON_MEMBERS,
    maxArrayElements: MAX_JSON_ARRAY_ELEMENTS,
  });
  if (shape.depth > MAX_JSON_DEPTH) return { ok: false, failure: 'too_deep' };
  if (shape.containers > MAX_JSON_CONTAINERS) return { ok: false, failure: 'too_many_containers' };
  if (shape.members > MAX_JSON_MEMBERS) return { ok: false, failure: 'too_many_members' };
  if (shape.arrayElements > MAX_JSON_ARRAY_ELEMENTS) return { ok: false, failure: 'too_many_array_elements' };
  if (shape.loneSurrogate) return { ok: false, failure: 'lone_surrogate' };
  if (shape.nulCharacter) return { ok: false, failure: 'nul_character' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, failure: 'not_json' };
  }
}
