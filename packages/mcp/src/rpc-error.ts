import { McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * A JSON-RPC error for a request handler to throw. The SDK answers any
 * error with an integer `code` with that code, its `message` and `data` as
 * they are. The SDK's own `McpError` is no use for this: its constructor
 * prefixes the message with `MCP error <code>: `, which then goes on the wire
 * and is prefixed again by the client's `McpError`.
 */
export class RpcError extends Error {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** The JSON-RPC error's `data`, if any. */
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
  }
}

/**
 * An error a client request raised, to rethrow from a handler that forwards
 * the request: an `McpError` (the JSON-RPC error the upstream server
 * answered) becomes that JSON-RPC error again, its message without the
 * prefix the SDK added, so it passes through unchanged; anything else is
 * returned as it is.
 */
export function forwardedError(error: unknown): unknown {
  if (!(error instanceof McpError)) return error;
  const prefix = `MCP error ${error.code}: `;
  const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  return new RpcError(error.code, message, error.data);
}
