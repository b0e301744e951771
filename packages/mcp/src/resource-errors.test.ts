import { sqlDatabases } from '@agentinfra/testkit';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callOk } from './test-support/agent-scenario.js';
import { type McpTestServer, postMcp, startMcpTestServer } from './test-support/mcp-test-server.js';

describe.each(sqlDatabases())('resources/read errors over Streamable HTTP on $name', ({ create }) => {
  let t: McpTestServer;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startMcpTestServer(fixture.db);
  });

  afterAll(async () => {
    await t.stop();
    await cleanup();
  });

  /** The JSON-RPC error /mcp answers to `resources/read` of `uri` with alice's key. */
  async function readOnWire(uri: string): Promise<unknown> {
    const response = await postMcp(t, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } }));
    return ((await response.json()) as { error?: unknown }).error;
  }

  it('answers an unknown artifact with -32002 and the API error once, without the SDK’s "MCP error" prefix', async () => {
    const uri = 'agentinfra://artifacts/art_nope';
    const message = 'not_found: Artifact "art_nope" does not exist.';
    expect(await readOnWire(uri)).toEqual({
      code: -32002,
      message,
      data: { uri, error: { code: 'not_found', message: 'Artifact "art_nope" does not exist.' } },
    });
    const client = await t.connect(t.keys.alice);
    const error = await client.readResource({ uri }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).message).toBe(`MCP error -32002: ${message}`);
  });

  it('answers a pending artifact with -32602 and conflict, not "resource not found"', async () => {
    const client = await t.connect(t.keys.alice);
    const registered = await callOk(client, 'artifacts_register', { key: 'pending.txt', mime: 'text/plain', size: 3 });
    const uri = `agentinfra://artifacts/${registered.artifact_id}`;
    const message = `conflict: Artifact "${registered.artifact_id}" is not committed yet.`;
    expect(await readOnWire(uri)).toEqual({
      code: -32602,
      message,
      data: { uri, error: { code: 'conflict', message: message.slice('conflict: '.length) } },
    });
    const error = await client.readResource({ uri }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: -32602, message: `MCP error -32602: ${message}` });
  });

  it('answers a URI that names no artifact with -32002, the message as written', async () => {
    // Review: a bad percent escape threw URIError from decodeURIComponent and answered -32603 Internal error.
    for (const uri of ['agentinfra://artifacts/no such id', 'agentinfra://artifacts/%ZZ', 'agentinfra://artifacts/%E0%A4%A']) {
      expect(await readOnWire(uri)).toEqual({ code: -32002, message: `No resource ${uri}.`, data: { uri } });
    }
  });
});
