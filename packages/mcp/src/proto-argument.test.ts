import { sqlDatabases } from '@agentinfra/testkit';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callOk } from './test-support/agent-scenario.js';
import { tableCounts } from './test-support/invalid-arguments.js';
import { type McpTestServer, startMcpTestServer } from './test-support/mcp-test-server.js';

/** alice's memory_write arguments (the API's request body), as JSON text, with `extra` (`"key":value`) added. */
const memoryWrite = (extra: string) => `{"agent_id":"alice","kind":"semantic","text":"x","provenance":"p","scope":["self"],${extra}}`;

describe.each(sqlDatabases())('tool arguments named __proto__, constructor or prototype on $name', ({ create }) => {
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

  it('refuses each as an unknown field, as the HTTP API does, and writes nothing', async () => {
    const client = await t.connect(t.keys.alice);
    const before = await tableCounts(t.server.kernel.sql.knex);
    for (const field of ['__proto__', 'constructor', 'prototype']) {
      const args = memoryWrite(`"${field}":{"admin":true}`);
      const overHttp = await t.server.call('agent-memory/mem/write', args, { credential: t.keys.alice });
      expect(overHttp.status, field).toBe(400);
      const result = (await client.callTool({ name: 'memory_write', arguments: JSON.parse(args) })) as CallToolResult;
      expect(result.isError, field).toBe(true);
      expect(result.content[1], field).toEqual({ type: 'text', text: JSON.stringify(overHttp.body) });
      expect(overHttp.body.error.details.fields, field).toEqual([{ path: field, message: 'Unknown field.' }]);
    }
    expect(await tableCounts(t.server.kernel.sql.knex)).toEqual(before);
  });

  it('refuses __proto__ in artifacts_upload, the tool of the MCP surface itself', async () => {
    const client = await t.connect(t.keys.alice);
    const registered = await callOk(client, 'artifacts_register', { key: 'proto.txt', mime: 'text/plain', size: 3 });
    const args = JSON.parse(`{"upload_url":${JSON.stringify(registered.upload_url)},"content":"abc","__proto__":{}}`);
    const result = (await client.callTool({ name: 'artifacts_upload', arguments: args })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ text: expect.stringMatching(/^invalid_request: .* __proto__: Unknown field\./) });
  });
});
