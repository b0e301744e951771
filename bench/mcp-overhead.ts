/**
 * Issue #14 benchmark: the cost of the MCP surface on `agentinfra serve`
 * (embedded default: SQLite file, local word-vector embedder).
 * 1. `tools/call memory_query` over Streamable HTTP at `/mcp` against the
 *    baseline `POST /functions/v1/agent-memory/mem/query` on the same
 *    server, same query, same HTTP client, requests interleaved one at a
 *    time, over 10,000 semantic memories (`BENCH_MCP_MEMORIES`; the corpus
 *    memory-http calls small). Target: p50 ratio ≤ 1.3×.
 * 2. 200 MCP client sessions held open at once (each initialized, tools
 *    listed, its own keep-alive connection): the server's RSS growth per
 *    session. Target: ≤ 200 KB.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { percentiles } from './support/latency-percentiles.js';
import { perSessionFetch } from './support/per-session-fetch.js';
import { BENCH_BRIDGE_KEY, benchServeEnv, printTable, startProcess } from './support/serve-process.js';

const cli = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'agentinfra-bench-mcp-'));
const bridge = BENCH_BRIDGE_KEY;
const env = benchServeEnv(dir);
const MEMORIES = Number(process.env.BENCH_MCP_MEMORIES ?? 10_000);
const REQUESTS = Number(process.env.BENCH_MCP_REQUESTS ?? 2_000);
const SESSIONS = Number(process.env.BENCH_MCP_SESSIONS ?? 200);

async function post(url: string, path: string, body: unknown, credential: string): Promise<Record<string, string>> {
  const response = await fetch(`${url}/functions/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${credential}` },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, string>;
}

const server = await startProcess([cli, 'serve'], { env });
try {
  await post(server.url, 'agent-identity/agents/create', { agent_id: 'bench', display_name: 'Bench' }, bridge);
  const key = (await post(server.url, 'agent-identity/device/issue', { agent_id: 'bench', label: 'bench' }, bridge)).device_key!;
  const topics = ['deploy', 'database', 'editor', 'invoice', 'meeting', 'customer', 'release', 'incident'];
  for (let i = 0; i < MEMORIES; i += 1) {
    const text = `Note ${i}: the ${topics[i % topics.length]} owner reviewed the ${topics[(i * 7) % topics.length]} plan on day ${i % 31}.`;
    await post(
      server.url,
      'agent-memory/mem/write',
      { agent_id: 'bench', kind: 'semantic', text, provenance: 'bench', scope: ['self'] },
      key,
    );
  }

  // 1. Latency: the same query through the API and through MCP, interleaved.
  const query = { q: 'who reviewed the release plan?', k: 5 };
  const api = () =>
    fetch(`${server.url}/functions/v1/agent-memory/mem/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ agent_id: 'bench', ...query, scope: ['self'] }),
    });
  const mcpHeaders = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${key}`,
    'mcp-protocol-version': '2025-11-25',
  };
  let id = 0;
  const mcp = () =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'memory_query', arguments: query } }),
    });
  const timed = async (send: () => Promise<Response>, check: (text: string) => boolean) => {
    const started = performance.now();
    const response = await send();
    const text = await response.text();
    const ms = performance.now() - started;
    if (!response.ok || !check(text)) throw new Error(`unexpected answer ${response.status}: ${text.slice(0, 300)}`);
    return ms;
  };
  const apiOk = (text: string) => text.includes('"hits"');
  const mcpOk = (text: string) => text.includes('"structuredContent"') && !text.includes('"isError":true');
  for (let i = 0; i < 200; i += 1) {
    await timed(api, apiOk);
    await timed(mcp, mcpOk);
  }
  const apiSamples: number[] = [];
  const mcpSamples: number[] = [];
  const cpuBefore = server.cpuMs();
  for (let i = 0; i < REQUESTS; i += 1) {
    apiSamples.push(await timed(api, apiOk));
    mcpSamples.push(await timed(mcp, mcpOk));
  }
  const cpuPerPair = ((server.cpuMs() - cpuBefore) * 1000) / REQUESTS;
  const a = percentiles(apiSamples);
  const m = percentiles(mcpSamples);
  printTable(
    ['request', 'p50 ms', 'p99 ms', 'p50 vs baseline'],
    [
      ['baseline: POST /functions/v1/agent-memory/mem/query', a.p50.toFixed(2), a.p99.toFixed(2), '1.00'],
      ['tools/call memory_query at /mcp', m.p50.toFixed(2), m.p99.toFixed(2), (m.p50 / a.p50).toFixed(2)],
    ],
  );
  process.stdout.write(
    `\n${REQUESTS} requests each, one at a time, interleaved; ${MEMORIES} semantic memories; server CPU ${cpuPerPair.toFixed(0)} µs per API + MCP pair.\n`,
  );
  process.stdout.write(`**p50 ratio ≤ 1.3×: ${m.p50 / a.p50 <= 1.3 ? 'met' : 'NOT met'}** (${(m.p50 / a.p50).toFixed(2)}×)\n\n`);

  // 2. Memory: many sessions held open at once.
  const open = async () => {
    const connection = perSessionFetch();
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
        fetch: connection.fetch,
      }),
    );
    await client.listTools();
    return { client, connection };
  };
  const close = async (sessions: Array<Awaited<ReturnType<typeof open>>>) => {
    for (const session of sessions) {
      await session.client.close();
      session.connection.close();
    }
  };
  await close(await Promise.all(Array.from({ length: 20 }, open)));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const rssBefore = server.rssMb();
  const sessions: Array<Awaited<ReturnType<typeof open>>> = [];
  for (let i = 0; i < SESSIONS; i += 20) sessions.push(...(await Promise.all(Array.from({ length: Math.min(20, SESSIONS - i) }, open))));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await Promise.all(sessions.map((session) => session.client.listTools()));
  const rssAfter = server.rssMb();
  const perSessionKb = ((rssAfter - rssBefore) * 1024) / SESSIONS;
  printTable(
    ['sessions held open', 'server RSS before MB', 'server RSS with sessions MB', 'growth per session KB'],
    [[SESSIONS, rssBefore.toFixed(1), rssAfter.toFixed(1), perSessionKb.toFixed(1)]],
  );
  process.stdout.write(
    `\n**RSS growth per session ≤ 200 KB: ${perSessionKb <= 200 ? 'met' : 'NOT met'}** (${perSessionKb.toFixed(1)} KB)\n`,
  );
  await close(sessions);
} finally {
  await server.stop();
}
