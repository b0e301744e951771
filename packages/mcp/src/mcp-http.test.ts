import { sqlDatabases } from '@agentinfra/testkit';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callError, callOk, runAgentScenario } from './test-support/agent-scenario.js';
import { invalidArgumentsFor, tableCounts } from './test-support/invalid-arguments.js';
import { type McpTestServer, startMcpTestServer } from './test-support/mcp-test-server.js';

describe.each(sqlDatabases())('MCP over Streamable HTTP on $name (#14)', ({ create }) => {
  let t: McpTestServer;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startMcpTestServer(fixture.db, { maxInlineBytes: 4_096 });
  });

  afterAll(async () => {
    await t.stop();
    await cleanup();
  });

  it('initializes and lists every agent tool with schemas and annotations, and no bridge-only operation', async () => {
    const client = await t.connect(t.keys.alice);
    expect(client.getServerVersion()?.name).toBe('agentinfra');
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const name of ['memory_write', 'memory_query', 'artifacts_register', 'artifacts_upload', 'postbox_list', 'scheduler_job_put']) {
      expect(names).toContain(name);
    }
    for (const name of [
      'identity_agents_create',
      'identity_device_issue',
      'identity_settings_set',
      'postbox_ingest',
      'gateway_ip_report',
    ]) {
      expect(names).not.toContain(name);
    }
    const query = tools.find((tool) => tool.name === 'memory_query')!;
    expect(query.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(query.inputSchema.required).toEqual(['q']);
    expect(query.outputSchema?.properties).toHaveProperty('hits');
    expect(query.description).toMatch(/meaning/);
    const forget = tools.find((tool) => tool.name === 'memory_forget')!;
    expect(forget.annotations?.destructiveHint).toBe(true);
    const reveal = tools.find((tool) => tool.name === 'postbox_list')!.inputSchema.properties?.reveal_quarantined as {
      description: string;
    };
    expect(reveal.description).toMatch(/DANGER/);
  });

  it('runs memory, artifacts, postbox and scheduler through tools and resources', async () => {
    await runAgentScenario(await t.connect(t.keys.alice), t.server, 'http');
  });

  it('reads an artifact over the inline limit as a short-lived link', async () => {
    const client = await t.connect(t.keys.alice);
    const content = 'x'.repeat(5_000);
    const registered = await callOk(client, 'artifacts_register', { key: 'big.txt', mime: 'text/plain', size: content.length });
    const { sha256 } = await callOk(client, 'artifacts_upload', { upload_url: registered.upload_url, content });
    await callOk(client, 'artifacts_commit', { artifact_id: registered.artifact_id, sha256 });
    const uri = `agentinfra://artifacts/${registered.artifact_id}`;
    const [entry] = (await client.readResource({ uri })).contents;
    expect(entry).toMatchObject({ uri, mimeType: 'text/uri-list' });
    expect(await fetch((entry as { text: string }).text).then((response) => response.text())).toBe(content);
  });

  it('acts for the credential’s agent by default and refuses another agent as the API does', async () => {
    const client = await t.connect(t.keys.bob);
    const own = await callOk(client, 'memory_kv_put', { key: 'color', value: 'blue', scope: ['self'] });
    expect(own.key).toBe('color');
    expect(await callError(client, 'memory_kv_get', { agent_id: 'alice', key: 'color', scope: ['self'] })).toMatch(/^forbidden: /);
  });

  it('shows a narrow delegation only the tools its permissions allow, and refuses the others', async () => {
    const client = await t.connect(await t.delegate(['memory.read']));
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(['memory_kv_get', 'memory_query', 'memory_set_get']);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect(await callError(client, 'memory_write', { kind: 'semantic', text: 'x', provenance: 'p', scope: ['self'] })).toMatch(
      /^not_found: /,
    );
    expect((await callOk(client, 'memory_query', { q: 'deploy' })).hits.length).toBeGreaterThan(0);

    const artifacts = await t.connect(await t.delegate(['artifacts.read', 'artifacts.write']));
    const artifactTools = (await artifacts.listTools()).tools.map((tool) => tool.name).sort();
    expect(artifactTools).toEqual(['artifacts_commit', 'artifacts_download', 'artifacts_list', 'artifacts_register', 'artifacts_upload']);
  });

  it('answers 401 with WWW-Authenticate: Bearer before any MCP message without or with an unknown credential, 403 to the bridge key', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${t.server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: initialize,
      });
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer dk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      { authorization: 'Basic abc' },
    ];
    for (const headers of attempts) {
      const response = await post(headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
    }
    const bridge = await post({ authorization: `Bearer ${t.server.bridgeKey}` });
    expect(bridge.status).toBe(403);
    expect(((await bridge.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    const refused = await t.connect('dt_unknown').catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
  });

  it('stops an expired delegation at once, in the middle of a session', async () => {
    const expiresAt = new Date(Date.now() + 1_500);
    const client = await t.connect(await t.delegate(['memory.read'], expiresAt));
    await callOk(client, 'memory_query', { q: 'deploy' });
    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 50));
    const error = await client.callTool({ name: 'memory_query', arguments: { q: 'deploy' } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);
  });

  it('answers invalid arguments to every tool with isError invalid_request, and changes nothing', async () => {
    const client = await t.connect(t.keys.alice);
    const { tools } = await client.listTools();
    const before = await tableCounts(t.server.kernel.sql.knex);
    for (const tool of tools) {
      const result = (await client.callTool({ name: tool.name, arguments: invalidArgumentsFor(tool.inputSchema) })) as CallToolResult;
      expect(result.isError, tool.name).toBe(true);
      expect(result.content[0], tool.name).toMatchObject({ type: 'text', text: expect.stringMatching(/^invalid_request: /) });
    }
    expect(await tableCounts(t.server.kernel.sql.knex)).toEqual(before);
  });

  it('answers an unknown tool with an isError result, not a protocol error', async () => {
    const client = await t.connect(t.keys.alice);
    expect(await callError(client, 'no_such_tool', {})).toMatch(/^not_found: /);
  });
});
