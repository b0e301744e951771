import { createCapturedLogger } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callError, callOk, runAgentScenario } from './test-support/agent-scenario.js';
import { invalidArgumentsFor, tableCounts } from './test-support/invalid-arguments.js';
import { type McpTestServer, postMcp, startMcpTestServer } from './test-support/mcp-test-server.js';

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
    // Past the test's timeout, so that no load makes it pass before the first call (1.5 s did on a loaded CI host), and
    // reached by moving the server's clock to it, not by waiting.
    const expiresAt = new Date(Date.now() + 120_000);
    const client = await t.connect(await t.delegate(['memory.read'], expiresAt));
    await callOk(client, 'memory_query', { q: 'deploy' });
    // The server's time is now the expiry (or just past it): the token ends at its expires_at.
    t.setClockOffset(expiresAt.getTime() - Date.now());
    try {
      const error = await client.callTool({ name: 'memory_query', arguments: { q: 'deploy' } }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StreamableHTTPError);
      expect((error as StreamableHTTPError).code).toBe(401);
    } finally {
      t.setClockOffset(0);
    }
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

  /** A JSON-RPC answer of /mcp. */
  type RpcAnswer = { result?: CallToolResult; error?: { code: number; message: string } };

  /** POSTs `body` to /mcp with alice's key; resolves with the status and the JSON answer. */
  async function postRaw(body: string): Promise<{ status: number; answer: RpcAnswer }> {
    const response = await postMcp(t, body);
    return { status: response.status, answer: (await response.json()) as RpcAnswer };
  }

  /** The text of a `tools/call` request with `args` (JSON text) as its arguments. */
  const toolCall = (name: string, args: string) =>
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;

  /** memory_kv_put arguments whose value is `levels` arrays deep (the arguments object is one level more). */
  const nestedKv = (levels: number) => `{"key":"deep","scope":["self"],"value":${'['.repeat(levels)}${']'.repeat(levels)}}`;

  it('answers params that fail the request schema with -32602 Invalid params in one line, not -32603 and a zod dump', async () => {
    const cases = [
      { body: toolCall('memory_query', '"q"'), field: 'params.arguments' },
      { body: '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":5}}', field: 'params.uri' },
    ];
    for (const { body, field } of cases) {
      const { status, answer } = await postRaw(body);
      expect(status).toBe(200);
      expect(answer.error?.code).toBe(-32602);
      // As written: no `MCP error -32602: ` prefix, which the client's McpError would repeat.
      expect(answer.error?.message).toMatch(/^Invalid params of /);
      expect(answer.error?.message).toContain(`${field}: `);
      expect(answer.error?.message).not.toContain('\n');
    }
  });

  it('refuses a body past the API’s JSON nesting and container bounds with HTTP 400 naming the limit, before the SDK reads it', async () => {
    const within = await postRaw(toolCall('memory_kv_put', nestedKv(31)));
    expect(within.answer.result?.structuredContent).toMatchObject({ key: 'deep' });
    for (const levels of [32, 40, 5_000, 1_000_000]) {
      const { status, answer } = await postRaw(toolCall('memory_kv_put', nestedKv(levels)));
      expect(status, `${levels} levels`).toBe(400);
      expect(answer).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringMatching(/deeper than 34 levels .*tool arguments: 32/), data: { max_depth: 34 } },
      });
    }
    const branching = `{"key":"wide","scope":["self"],"value":[${Array(1_000_000).fill('[]').join(',')}]}`;
    const { status, answer } = await postRaw(toolCall('memory_kv_put', branching));
    expect(status).toBe(400);
    expect(answer.error).toEqual({
      code: -32600,
      message: expect.stringMatching(/more than 10002 arrays and objects .*tool arguments: 10000/),
      data: { max_containers: 10_002 },
    });
  });

  it('refuses a lone surrogate escape and bytes that are not UTF-8, as the HTTP API does', async () => {
    const lone = await postRaw(toolCall('memory_kv_put', '{"key":"lone","scope":["self"],"value":"a\\ud800b"}'));
    expect(lone.status).toBe(400);
    expect(lone.answer.error).toEqual({
      code: -32600,
      message: expect.stringMatching(/lone UTF-16 surrogate/),
      data: { lone_surrogate: true },
    });
    const nul = await postRaw(toolCall('memory_kv_put', '{"key":"nul","scope":["self"],"value":"a\\u0000b"}'));
    expect(nul.status).toBe(400);
    expect(nul.answer.error).toEqual({ code: -32600, message: expect.stringMatching(/NUL character/), data: { nul_character: true } });
    const bytes = Buffer.concat([
      Buffer.from(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_kv_put","arguments":{"key":"bytes","scope":["self"],"value":"',
      ),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}}}'),
    ]);
    const response = await postMcp(t, bytes);
    expect(response.status).toBe(400);
    expect(((await response.json()) as RpcAnswer).error).toMatchObject({ code: -32700, message: expect.stringMatching(/UTF-8/) });
  });

  it('answers a huge string with the API’s 1 MiB body limit as a tool error; a huge flat array is refused before parsing', async () => {
    const huge = (value: string) => toolCall('memory_kv_put', `{"key":"huge","scope":["self"],"value":${value}}`);
    const text = await postRaw(huge(`"${'x'.repeat(7_000_000)}"`));
    expect(text.status).toBe(200);
    expect(text.answer.result?.isError).toBe(true);
    expect(text.answer.result?.content[0]).toMatchObject({ text: expect.stringMatching(/^payload_too_large: .*1048576 bytes/) });
    // More array elements than the API takes, whatever the size (see mcp-guards.test.ts).
    const array = await postRaw(huge(`[${Array(3_000_000).fill('0').join(',')}]`));
    expect(array.status).toBe(400);
    expect(array.answer.error).toMatchObject({ code: -32600, data: { max_array_elements: 51_000 } });
    // Over the API's limit a body may only be big because of its strings: 50,000 of them are too many.
    const strings = await postRaw(huge(`[${Array(50_000).fill('"twenty-five characters.."').join(',')}]`));
    expect(strings.status).toBe(413);
    expect(strings.answer.error).toMatchObject({ code: -32600, message: expect.stringMatching(/more than 1000 array elements/) });
  });

  it('refuses artifacts_upload content that is not standard base64 instead of uploading what Node decodes of it', async () => {
    const client = await t.connect(t.keys.alice);
    const registered = await callOk(client, 'artifacts_register', { key: 'bytes.bin', mime: 'application/octet-stream', size: 3 });
    // Not the alphabet, a line break, no padding (4 chars for 2 bytes), base64url, non-zero padding bits.
    for (const content of ['!!!', '+/+/\n', '+/8', '-_-_', '+/9=']) {
      const message = await callError(client, 'artifacts_upload', { upload_url: registered.upload_url, content, encoding: 'base64' });
      expect(message, JSON.stringify(content)).toMatch(/^invalid_request: content is not valid base64\. content: not standard base64/);
    }
    const uploaded = await callOk(client, 'artifacts_upload', { upload_url: registered.upload_url, content: '+/+/', encoding: 'base64' });
    expect(uploaded.size).toBe(3);
  });
});

describe('the access log line of /mcp (SQLite)', () => {
  it('carries the request id the response names and the credential that called; tool calls keep the client address', async () => {
    const { logger, lines } = createCapturedLogger('info');
    const [entry] = sqlDatabases();
    const fixture = await entry!.create();
    const t = await startMcpTestServer(fixture.db, { logger });
    try {
      const response = await postMcp(t, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }));
      expect(response.status).toBe(200);
      const requestId = response.headers.get('x-request-id');
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      const line = lines.find((item) => item.msg === 'request' && item.route === '/mcp');
      expect(line).toMatchObject({ request_id: requestId, credential: 'device', agent_id: 'alice', status: 200 });
      const put = {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'identity_secrets_put', arguments: { key: 'k', value: 'v' } },
      };
      expect((await postMcp(t, JSON.stringify(put))).status).toBe(200);
      const audit = await t.server.call('agent-identity/audit/list', { action: 'secret.put' }, { credential: t.server.bridgeKey });
      // The tool's in-process API call is audited for the MCP client's address, not `unknown`.
      expect(audit.body.events.map((event: { client: string }) => event.client)).toEqual(['127.0.0.1']);
    } finally {
      await t.stop();
      await fixture.cleanup();
    }
  });
});
