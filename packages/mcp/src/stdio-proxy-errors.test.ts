import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { answeredError, fromServer } from './stdio-proxy.js';

/** The error the SDK's client transport raises for an HTTP error response with `body`. */
function refused(status: number, body: unknown): StreamableHTTPError {
  return new StreamableHTTPError(status, `Error POSTing to endpoint: ${typeof body === 'string' ? body : JSON.stringify(body)}`);
}

describe('the stdio proxy tells answers from failures to get one', () => {
  it('forwards JSON-RPC errors the server answered, not the SDK’s own timeout and closed-connection errors', () => {
    expect(fromServer(new McpError(-32002, 'not_found: Artifact "art_nope" does not exist.'))).toBe(true);
    expect(fromServer(new McpError(ErrorCode.InvalidParams, 'Invalid params'))).toBe(true);
    expect(fromServer(new McpError(ErrorCode.RequestTimeout, 'Request timed out'))).toBe(false);
    expect(fromServer(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'))).toBe(false);
    expect(fromServer(new Error('fetch failed'))).toBe(false);
  });

  // Review: a JSON-RPC error /mcp refused a request with (HTTP 400 or 413) reached stdio clients as -32603 without its data.
  it('passes on the JSON-RPC error of an HTTP refusal as it came, and no CONTRACT.md body or non-JSON answer', () => {
    const error = { code: -32600, message: 'Invalid Request: too deep.', data: { max_depth: 34 } };
    expect(answeredError(refused(400, { jsonrpc: '2.0', error }))).toMatchObject({ ...error, name: 'RpcError' });
    expect(answeredError(refused(400, { jsonrpc: '2.0', id: null, error }))).toMatchObject(error);
    const bare = answeredError(refused(413, { jsonrpc: '2.0', error: { code: -32600, message: 'The request body is over 8 bytes.' } }));
    expect(bare).toMatchObject({ code: -32600, message: 'The request body is over 8 bytes.', data: undefined });
    expect(answeredError(new McpError(-32002, 'not_found: gone', { uri: 'x' }))).toMatchObject({
      code: -32002,
      message: 'not_found: gone',
      data: { uri: 'x' },
    });
    expect(answeredError(refused(429, { error: { code: 'rate_limited', message: 'Slow down.' } }))).toBeNull();
    expect(answeredError(refused(401, { error: { code: 'unauthenticated', message: 'No.' } }))).toBeNull();
    expect(answeredError(refused(502, '<html>Bad Gateway</html>'))).toBeNull();
    expect(answeredError(refused(400, { jsonrpc: '2.0', error: { code: 'x', message: 'not a JSON-RPC code' } }))).toBeNull();
    expect(answeredError(new McpError(ErrorCode.RequestTimeout, 'Request timed out'))).toBeNull();
    expect(answeredError(new TypeError('fetch failed'))).toBeNull();
  });
});
