/**
 * Issue #13 benchmark: the cost of `@agentinfra/client` over a bare `fetch`
 * on `agentinfra serve` (embedded default: SQLite file, local word-vector
 * embedder). For each route, the same body is sent by `client.invoke` and by
 * a hand-written `fetch` + `response.json()`, interleaved one at a time on
 * the same server in the same run, so both see the same load:
 * - `agent-memory/mem/query` over `BENCH_CLIENT_MEMORIES` (default 1,000) semantic memories;
 * - `agent-identity/secrets/get`, a cheap route where the client's share of the time is largest.
 * Target: p50 ratio ≤ 1.1× on each route.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@agentinfra/client';
import { percentiles } from './support/latency-percentiles.js';
import { BENCH_BRIDGE_KEY, benchServeEnv, printTable, startProcess } from './support/serve-process.js';

const cli = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'agentinfra-bench-client-'));
const bridge = BENCH_BRIDGE_KEY;
const env = benchServeEnv(dir);
const MEMORIES = Number(process.env.BENCH_CLIENT_MEMORIES ?? 1_000);
const REQUESTS = Number(process.env.BENCH_CLIENT_REQUESTS ?? 2_000);
const TARGET = 1.1;

const server = await startProcess([cli, 'serve'], { env });
try {
  const admin = createClient({ url: server.url, key: bridge });
  await admin.identity.agents.create({ agent_id: 'bench', display_name: 'Bench' });
  const { device_key: key } = await admin.identity.device.issue({ agent_id: 'bench', label: 'bench' });
  const client = createClient({ url: server.url, key });
  const topics = ['deploy', 'database', 'editor', 'invoice', 'meeting', 'customer', 'release', 'incident'];
  for (let i = 0; i < MEMORIES; i += 1) {
    const text = `Note ${i}: the ${topics[i % topics.length]} owner reviewed the ${topics[(i * 7) % topics.length]} plan on day ${i % 31}.`;
    await client.memory.write({ agent_id: 'bench', kind: 'semantic', text, provenance: 'bench', scope: ['self'] });
  }
  await client.identity.secrets.put({ agent_id: 'bench', key: 'api_token', value: 'tok_0123456789' });

  const cases = [
    { path: 'agent-memory/mem/query', body: { agent_id: 'bench', q: 'who reviewed the release plan?', k: 5, scope: ['self'] } },
    { path: 'agent-identity/secrets/get', body: { agent_id: 'bench', key: 'api_token' } },
  ] as const;
  const rows: Array<Array<string | number>> = [];
  const verdicts: string[] = [];
  for (const { path, body } of cases) {
    const bare = async () => {
      const response = await fetch(`${server.url}/functions/v1/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return response.json();
    };
    const typed = () => client.invoke(path, body as never);
    const timed = async (send: () => Promise<unknown>) => {
      const started = performance.now();
      await send();
      return performance.now() - started;
    };
    for (let i = 0; i < 200; i += 1) {
      await timed(bare);
      await timed(typed);
    }
    const bareSamples: number[] = [];
    const typedSamples: number[] = [];
    for (let i = 0; i < REQUESTS; i += 1) {
      if (i % 2 === 0) {
        bareSamples.push(await timed(bare));
        typedSamples.push(await timed(typed));
      } else {
        typedSamples.push(await timed(typed));
        bareSamples.push(await timed(bare));
      }
    }
    const b = percentiles(bareSamples);
    const t = percentiles(typedSamples);
    const ratio = t.p50 / b.p50;
    rows.push([`baseline: fetch POST /functions/v1/${path}`, b.p50.toFixed(3), b.p99.toFixed(3), '1.00']);
    rows.push([`client.invoke('${path}')`, t.p50.toFixed(3), t.p99.toFixed(3), ratio.toFixed(3)]);
    verdicts.push(`**${path} p50 ratio ≤ ${TARGET}×: ${ratio <= TARGET ? 'met' : 'NOT met'}** (${ratio.toFixed(3)}×)`);
  }
  printTable(['request', 'p50 ms', 'p99 ms', 'p50 vs baseline'], rows);
  process.stdout.write(
    `\n${REQUESTS} requests each per route, one at a time, interleaved (order alternating); ${MEMORIES} semantic memories.\n${verdicts.join('\n')}\n`,
  );
} finally {
  await server.stop();
}
