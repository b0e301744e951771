import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binPath, post, runCli, type ServeProcess, startServe } from './serve-process.test-support.js';

/** The README's two MCP client configurations against a real `agentinfra serve` on the embedded default (#14). */
describe('agentinfra serve as an MCP server, configured as the README says', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-mcp-cli-'));
  const env = {
    AGENTINFRA_CONFIG: join(dir, 'agentinfra.config.json'),
    AGENTINFRA_DATA_DIR: join(dir, 'data'),
    AGENTINFRA_ACME_HTTP_PORT: '0',
    AGENTINFRA_SMTP_PORT: '0',
  };
  let server: ServeProcess;
  let key: string;

  beforeAll(async () => {
    expect((await runCli(['init'], { cwd: dir, env })).code).toBe(0);
    const bridgeKey = JSON.parse(readFileSync(env.AGENTINFRA_CONFIG, 'utf8')).bridgeKey as string;
    server = await startServe(['--port', '0'], { cwd: dir, env });
    expect((await post(server.url, 'agent-identity/agents/create', { agent_id: 'alice', display_name: 'Alice' }, bridgeKey)).status).toBe(
      200,
    );
    key = (await post(server.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'mcp' }, bridgeKey)).body.device_key;
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
  });

  const transports: Array<[string, () => Transport]> = [
    [
      'Streamable HTTP at /mcp',
      () =>
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
    ],
    [
      'stdio through agentinfra mcp',
      () =>
        new StdioClientTransport({
          command: process.execPath,
          args: [binPath, 'mcp', '--url', server.url],
          env: { PATH: process.env.PATH ?? '', AGENTINFRA_KEY: key },
          stderr: 'ignore',
        }),
    ],
  ];

  it.each(transports)('%s lists the tools and remembers and recalls', async (name, transport) => {
    const client = new Client({ name: 'readme', version: '1.0.0' });
    await client.connect(transport());
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('memory_query');
      const text = `Deploys happen on Tuesdays (${name}).`;
      const written = await client.callTool({
        name: 'memory_write',
        arguments: { kind: 'semantic', text, provenance: 'readme', scope: ['self'] },
      });
      expect(written.isError).toBeFalsy();
      const found = await client.callTool({ name: 'memory_query', arguments: { q: `which day do we deploy? ${name}`, k: 1 } });
      expect((found.structuredContent as { hits: Array<{ text: string }> }).hits[0]?.text).toBe(text);
    } finally {
      await client.close();
    }
  });
});
