import type { McpError } from '@modelcontextprotocol/sdk/types.js';

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
 * The JSON-RPC error an `McpError` stands for (one the upstream server
 * answered a client request with), to rethrow from a handler that forwards
 * the request: the same code and `data`, its message without the prefix the
 * SDK added, so it passes through unchanged.
 */
export function forwardedError(error: McpError): RpcError {
  const prefix = `MCP error ${error.code}: `;
  const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  return new RpcError(error.code, message, error.data);
}
