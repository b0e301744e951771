import {
  type JsonShape,
  jsonShape,
  MAX_JSON_ARRAY_ELEMENTS,
  MAX_JSON_CONTAINERS,
  MAX_JSON_DEPTH,
  MAX_JSON_MEMBERS,
} from '@agentinfra/core';

/**
 * Levels (and objects) a JSON-RPC request adds around tool arguments: the
 * message and its `params`. So arguments get the API's bounds exactly (in a
 * batch, whose array is one more level, one level less).
 */
const ENVELOPE = 2;

/** Deepest nesting of arrays and objects in an MCP request body: the API's {@link MAX_JSON_DEPTH} for the arguments, plus the envelope. */
export const MAX_MCP_BODY_DEPTH = MAX_JSON_DEPTH + ENVELOPE;

/** Most arrays and objects in an MCP request body: the API's {@link MAX_JSON_CONTAINERS} for the arguments, plus the envelope. */
export const MAX_MCP_BODY_CONTAINERS = MAX_JSON_CONTAINERS + ENVELOPE;

/**
 * Most object members in an MCP request body: the API's {@link MAX_JSON_MEMBERS} for the
 * arguments, plus 1,000 for the envelopes (`jsonrpc`, `id`, `method`, `params`, `name`,
 * `arguments`: six per message, so a batch of more than a hundred messages).
 */
export const MAX_MCP_BODY_MEMBERS = MAX_JSON_MEMBERS + 1_000;

/**
 * Most array elements in an MCP request body, in all its arrays together: the API's
 * {@link MAX_JSON_ARRAY_ELEMENTS} for the arguments, plus 1,000 for the envelopes (a
 * message adds none, but each message of a batch is one element of the batch's array).
 */
export const MAX_MCP_BODY_ARRAY_ELEMENTS = MAX_JSON_ARRAY_ELEMENTS + 1_000;

/** A bound an MCP request body breaks, as a JSON-RPC error's message and `data`. */
export interface JsonBoundBreach {
  message: string;
  data:
    | { max_depth: number }
    | { max_containers: number }
    | { max_members: number }
    | { max_array_elements: number }
    | { lone_surrogate: true }
    | { nul_character: true };
}

/**
 * Checks the JSON text of an MCP request body against the bounds the HTTP
 * API puts on a request body (`MAX_JSON_DEPTH`, `MAX_JSON_CONTAINERS`,
 * `MAX_JSON_MEMBERS`, `MAX_JSON_ARRAY_ELEMENTS`),
 * widened by the JSON-RPC envelope, with the API's own one-pass count
 * (`jsonShape`, no parsing, stopping at the first breach), so that no
 * validator after it recurses thousands of levels deep (a stack overflow)
 * or walks millions of containers, and `JSON.parse` never builds hundreds of
 * thousands of array elements (a flat `[0,0,…]` under 1 MiB); and refuses a
 * string escaping a lone surrogate, which the API refuses too (it would be
 * stored as U+FFFD).
 * The same pass counts the commas outside strings, for the bound on a body
 * over the API's size limit (`MAX_MEMBERS_OVER_API_LIMIT`).
 * @returns the breach, or `null` when the text is within the bounds, and the commas counted.
 */
export function checkJsonBounds(text: string): { breach: JsonBoundBreach | null; commas: number } {
  const shape = jsonShape(text, {
    maxDepth: MAX_MCP_BODY_DEPTH,
    maxContainers: MAX_MCP_BODY_CONTAINERS,
    maxMembers: MAX_MCP_BODY_MEMBERS,
    maxArrayElements: MAX_MCP_BODY_ARRAY_ELEMENTS,
  });
  return { breach: breachOf(shape), commas: shape.commas };
}

/** The first bound `shape` breaks, in the order the API checks them, or `null`. */
function breachOf(shape: JsonShape): JsonBoundBreach | null {
  if (shape.depth > MAX_MCP_BODY_DEPTH) {
    return {
      message: `Invalid Request: the body is nested deeper than ${MAX_MCP_BODY_DEPTH} levels of arrays and objects (tool arguments: ${MAX_JSON_DEPTH}, as on the HTTP API).`,
      data: { max_depth: MAX_MCP_BODY_DEPTH },
    };
  }
  if (shape.containers > MAX_MCP_BODY_CONTAINERS) {
    return {
      message: `Invalid Request: the body holds more than ${MAX_MCP_BODY_CONTAINERS} arrays and objects (tool arguments: ${MAX_JSON_CONTAINERS}, as on the HTTP API).`,
      data: { max_containers: MAX_MCP_BODY_CONTAINERS },
    };
  }
  if (shape.members > MAX_MCP_BODY_MEMBERS) {
    return {
      message: `Invalid Request: the body holds more than ${MAX_MCP_BODY_MEMBERS} object members (tool arguments: ${MAX_JSON_MEMBERS}, as on the HTTP API).`,
      data: { max_members: MAX_MCP_BODY_MEMBERS },
    };
  }
  if (shape.arrayElements > MAX_MCP_BODY_ARRAY_ELEMENTS) {
    return {
      message: `Invalid Request: the body holds more than ${MAX_MCP_BODY_ARRAY_ELEMENTS} array elements in all (tool arguments: ${MAX_JSON_ARRAY_ELEMENTS}, as on the HTTP API).`,
      data: { max_array_elements: MAX_MCP_BODY_ARRAY_ELEMENTS },
    };
  }
  if (shape.loneSurrogate) {
    return {
      message:
        'Invalid Request: a string escapes a lone UTF-16 surrogate (such as "\\ud800"), which is not Unicode text; send text as UTF-8 or as surrogate pairs (as on the HTTP API).',
      data: { lone_surrogate: true },
    };
  }
  if (shape.nulCharacter) {
    return {
      message: 'Invalid Request: a string holds a NUL character ("\\u0000"), which no text field can store (as on the HTTP API).',
      data: { nul_character: true },
    };
  }
  return null;
}
