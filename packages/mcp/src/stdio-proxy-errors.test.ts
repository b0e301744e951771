import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { fromServer } from './stdio-proxy.js';

describe('the stdio proxy tells answers from failures to get one', () => {
  it('forwards JSON-RPC errors the server answered, not the SDK’s own timeout and closed-connection errors', () => {
    expect(fromServer(new McpError(-32002, 'not_found: Artifact "art_nope" does not exist.'))).toBe(true);
    expect(fromServer(new McpError(ErrorCode.InvalidParams, 'Invalid params'))).toBe(true);
    expect(fromServer(new McpError(ErrorCode.RequestTimeout, 'Request timed out'))).toBe(false);
    expect(fromServer(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'))).toBe(false);
    expect(fromServer(new Error('fetch failed'))).toBe(false);
  });
});
