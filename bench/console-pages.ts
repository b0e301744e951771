/**
 * Issue #16 benchmark: the operator console on 10,000 agents and 100,000
 * memories. Target: every page's data answers in ≤ 200 ms (lists are
 * paginated); judged on each page's p95.
 *
 *   pnpm exec tsc -b && pnpm bench console-pages     (≈ 2 minutes on SQLite, 5 on PostgreSQL, 2 cores)
 *
 * Per database (SQLite, the embedded default, first; then PostgreSQL on
 * AGENTINFRA_TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test,
 * in a fresh schema dropped at the end) it starts the real `agentinfra serve`
 * (packages/cli/dist/bin.js, word-vector embedder, console at /console) as a
 * child process, seeds it with support/console-seed.ts (memories through
 * /mem/write with several connections, bulk agents and the like straight
 * into the module tables), signs in with the bridge key through the sign-in
 * form (session cookie), then GETs every page, one request at a time over a
 * kept-alive connection, round-robin so that noise spreads over all pages:
 * two warm-up rounds, then CONSOLE_BENCH_SAMPLES (30) measured ones.
 * Baselines, measured in the same rounds: `GET /health` (the floor of a
 * request), and for each page the API route behind it (the page's main list
 * or summary) POSTed with the bridge key and the same body; the ratio
 * page p50 ÷ route p50 is what rendering and the page's other calls add.
 *
 * Sizes: CONSOLE_BENCH_AGENTS (10000), CONSOLE_BENCH_MEMORIES (100000);
 * CONSOLE_BENCH_DATABASES (`sqlite,postgres`) picks the databases.
 * Seeding progress goes to stderr.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPostgresDatabase } from '@agentinfra/adapter-postgres';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import type { SqlDatabase } from '@agentinfra/core';
import { databaseUrl, displayDatabaseUrl } from './support/agentinfra-bench-server.js';
import { agentName, BUSY_AGENT, seedConsoleService } from './support/console-seed.js';
import { BENCH_BRIDGE_KEY, benchServeEnv, printTable, startProcess } from './support/serve-process.js';

const AGENTS = Number(process.env.CONSOLE_BENCH_AGENTS ?? 10_000);
const MEMORIES = Number(process.env.CONSOLE_BENCH_MEMORIES ?? 100_000);
const SAMPLES = Number(process.env.CONSOLE_BENCH_SAMPLES ?? 30);
const DATABASES = (process.env.CONSOLE_BENCH_DATABASES ?? 'sqlite,postgres').split(',').filter(Boolean);
const WARMUP_ROUNDS = 2;
const TARGET_MS = 200;
const cli = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));

/** One console page and the API route behind it. */
interface PageCase {
  name: string;
  /** Path under the server URL, e.g. `/console/agents?q=x`. */
  path: string;
  /** The route behind the page (relative to /functions/v1) and the body the page sends it. */
  route: string;
  body: Record<string, unknown>;
}

/** p50, p95 and max of millisecond samples (nearest rank). */
function summary(samples: readonly number[]): { p50: number; p95: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
  return { p50: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1] ?? Number.NaN };
}

/** Signs in through the console's form with the bridge key. @returns the `cookie` header value of the session. */
async function signIn(url: string): Promise<string> {
  const response = await fetch(`${url}/console/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
    body: new URLSearchParams({ key: BENCH_BRIDGE_KEY }).toString(),
    redirect: 'manual',
  });
  await response.text();
  const cookie = response.headers.get('set-cookie')?.split(';')[0];
  if (response.status !== 303 || !cookie) throw new Error(`sign-in answered ${response.status} without a session cookie`);
  return cookie;
}

/** Starts `agentinfra serve` on `engine`, with the store opened for seeding. */
async function startServer(engine: string) {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-console-bench-'));
  const schema = `console_bench_${randomBytes(4).toString('hex')}`;
  const postgres = engine === 'postgres';
  const server = await startProcess([cli, 'serve'], {
    env: {
      ...benchServeEnv(dir),
      ...(postgres ? { AGENTINFRA_DATABASE_URL: databaseUrl, AGENTINFRA_DATABASE_SCHEMA: schema } : {}),
    },
  });
  server.child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[serve ${engine}] ${chunk.toString()}`));
  const db: SqlDatabase = postgres
    ? createPostgresDatabase({ url: databaseUrl, schema })
    : createSqliteDatabase({ filename: join(dir, 'agentinfra.db') });
  const stop = async () => {
    await server.stop();
    if (postgres) await db.knex.raw(`drop schema if exists "${schema}" cascade`);
    await db.knex.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  return { server, db, stop, where: postgres ? `${displayDatabaseUrl(databaseUrl)}, schema ${schema}` : join(dir, 'agentinfra.db') };
}

/** POSTs `body` to the API route with the bridge key. @returns the parsed answer and the milliseconds it took. */
async function callRoute(url: string, route: string, body: unknown): Promise<{ ms: number; answer: Record<string, unknown> }> {
  const started = performance.now();
  const response = await fetch(`${url}/functions/v1/${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_BRIDGE_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`${route}: HTTP ${response.status} ${text}`);
  return { ms, answer: JSON.parse(text) as Record<string, unknown> };
}

/** GETs `path` with the session cookie. @returns the milliseconds until the whole page arrived. @throws Error unless 200. */
async function getPage(url: string, path: string, cookie: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${url}${path}`, { headers: { cookie }, redirect: 'manual' });
  await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`GET ${path}: HTTP ${response.status}`);
  return ms;
}

/** Follows `route`'s cursor past about `rows` rows, 500 at a time. @returns the cursor reached (null past the end). */
async function deepCursor(url: string, route: string, body: Record<string, unknown>, rows: number): Promise<string | null> {
  let cursor: string | null = null;
  for (let seen = 0; seen < rows; seen += 500) {
    const { answer } = await callRoute(url, route, { ...body, limit: 500, cursor });
    cursor = (answer.next_cursor as string | null) ?? null;
    if (cursor === null) break;
  }
  return cursor;
}

const results: Array<{ engine: string; rows: string[][]; misses: string[]; note: string }> = [];
for (const engine of DATABASES) {
  const { server, db, stop, where } = await startServer(engine);
  try {
    process.stderr.write(`[bench] ${engine}: ${where}\n`);
    const seeded = await seedConsoleService(server.url, BENCH_BRIDGE_KEY, db, { agents: AGENTS, memories: MEMORIES, memoryConnections: 8 });
    const agentsDeep = await deepCursor(server.url, 'agent-identity/admin/agents/list', {}, AGENTS / 2);
    const memoriesDeep = await deepCursor(server.url, 'agent-memory/admin/memories/list', {}, MEMORIES / 2);
    const search = agentName(AGENTS - 1).slice(0, -1);
    const pages: PageCase[] = [
      { name: 'Overview', path: '/console/', route: 'agent-memory/admin/summary', body: {} },
      { name: 'Agents', path: '/console/agents', route: 'agent-identity/admin/agents/list', body: { cursor: null, limit: 50 } },
      {
        name: `Agents, search "${search}"`,
        path: `/console/agents?q=${search}`,
        route: 'agent-identity/admin/agents/list',
        body: { query: search, cursor: null, limit: 50 },
      },
      {
        name: `Agents, page at ~${AGENTS / 2}`,
        path: `/console/agents?cursor=${encodeURIComponent(agentsDeep ?? '')}`,
        route: 'agent-identity/admin/agents/list',
        body: { cursor: agentsDeep, limit: 50 },
      },
      {
        name: `Agent ${BUSY_AGENT}`,
        path: `/console/agents/${BUSY_AGENT}`,
        route: 'agent-identity/admin/agents/get',
        body: { agent_id: BUSY_AGENT },
      },
      { name: 'Memory', path: '/console/memory', route: 'agent-memory/admin/memories/list', body: { limit: 50, cursor: null } },
      {
        name: `Memory, page at ~${MEMORIES / 2}`,
        path: `/console/memory?cursor=${encodeURIComponent(memoriesDeep ?? '')}`,
        route: 'agent-memory/admin/memories/list',
        body: { limit: 50, cursor: memoriesDeep },
      },
      {
        name: 'Memory, kind episode',
        path: '/console/memory?kind=episode',
        route: 'agent-memory/admin/memories/list',
        body: { kind: 'episode', limit: 50, cursor: null },
      },
      {
        name: `Memory of ${BUSY_AGENT} (${MEMORIES / 10} memories)`,
        path: `/console/memory?agent=${BUSY_AGENT}`,
        route: 'agent-memory/admin/provenances/list',
        body: { agent_id: BUSY_AGENT, limit: 100 },
      },
      ...[
        ['topic words', 'deploy to the staging cluster'],
        ['words in every memory', 'owner reviewed the staging cluster'],
      ].map(([kind, q]) => ({
        name: `Memory of ${BUSY_AGENT}, semantic search (${kind})`,
        path: `/console/memory?agent=${BUSY_AGENT}&q=${encodeURIComponent(q ?? '')}`,
        route: 'agent-memory/mem/query',
        body: { agent_id: BUSY_AGENT, q, k: 10 },
      })),
      { name: 'Artifacts', path: '/console/artifacts', route: 'agent-artifacts/admin/artifacts/list', body: { limit: 50, cursor: null } },
      { name: 'Mesh', path: '/console/mesh', route: 'agent-mesh/admin/peers/list', body: { limit: 100, cursor: null } },
      { name: 'Gateway', path: '/console/gateway', route: 'agent-gateway/admin/hosts/list', body: { limit: 50, cursor: null } },
      {
        name: 'Postbox (quarantine queue)',
        path: '/console/postbox',
        route: 'agent-postbox/admin/messages/list',
        body: { quarantined: true, limit: 50, cursor: null },
      },
      {
        name: 'Postbox, quarantined message',
        path: `/console/postbox/messages/${seeded.quarantinedMessageId}`,
        route: 'agent-postbox/admin/messages/get',
        body: { id: seeded.quarantinedMessageId },
      },
      {
        name: 'Scheduler (jobs, runs)',
        path: '/console/scheduler',
        route: 'agent-scheduler/admin/runs/list',
        body: { limit: 50, cursor: null },
      },
      {
        name: 'Scheduler, failed runs',
        path: '/console/scheduler?status=failed',
        route: 'agent-scheduler/admin/runs/list',
        body: { status: 'failed', limit: 50, cursor: null },
      },
      { name: 'Settings', path: '/console/settings', route: 'agent-identity/settings/list', body: {} },
      { name: 'Audit', path: '/console/audit', route: 'agent-identity/audit/list', body: { limit: 50, cursor: null } },
      {
        name: `Audit of ${BUSY_AGENT}`,
        path: `/console/audit?agent=${BUSY_AGENT}`,
        route: 'agent-identity/audit/list',
        body: { agent_id: BUSY_AGENT, limit: 50, cursor: null },
      },
    ];
    const cookie = await signIn(server.url);
    const pageMs = pages.map(() => [] as number[]);
    const routeMs = pages.map(() => [] as number[]);
    const healthMs: number[] = [];
    for (let round = 0; round < WARMUP_ROUNDS + SAMPLES; round += 1) {
      const keep = round >= WARMUP_ROUNDS;
      const started = performance.now();
      const health = await fetch(`${server.url}/health`);
      await health.text();
      if (keep) healthMs.push(performance.now() - started);
      for (const [index, page] of pages.entries()) {
        const ms = await getPage(server.url, page.path, cookie);
        const { ms: apiMs } = await callRoute(server.url, page.route, page.body);
        if (keep) {
          pageMs[index]?.push(ms);
          routeMs[index]?.push(apiMs);
        }
      }
    }
    const fixed = (value: number) => value.toFixed(1);
    const health = summary(healthMs);
    const rows: string[][] = [['`GET /health` (baseline)', fixed(health.p50), fixed(health.p95), fixed(health.max), '', '', '']];
    const misses: string[] = [];
    for (const [index, page] of pages.entries()) {
      const measured = summary(pageMs[index] ?? []);
      const behind = summary(routeMs[index] ?? []);
      const met = measured.p95 <= TARGET_MS;
      if (!met) misses.push(page.name);
      rows.push([
        page.name,
        fixed(measured.p50),
        fixed(measured.p95),
        fixed(measured.max),
        met ? 'met' : '**NOT met**',
        `\`${page.route}\` ${fixed(behind.p50)}`,
        `${(measured.p50 / behind.p50).toFixed(1)}×`,
      ]);
    }
    const counts = Object.entries(seeded.counts)
      .map(([table, n]) => `${table} ${n.toLocaleString('en')}`)
      .join(', ');
    results.push({
      engine,
      rows,
      misses,
      note: `Seeded: ${counts}; memories through /mem/write in ${seeded.memorySeconds.toFixed(0)} s, the rest in ${seeded.otherSeconds.toFixed(0)} s. Load average after the run ${loadavg()
        .map((value) => value.toFixed(1))
        .join(' ')}.`,
    });
  } finally {
    await stop();
  }
}

for (const { engine, rows, misses, note } of results) {
  process.stdout.write(
    `\n### ${engine}: ${AGENTS.toLocaleString('en')} agents, ${MEMORIES.toLocaleString('en')} memories, ${SAMPLES} samples per page\n\n`,
  );
  printTable(['page', 'p50 ms', 'p95 ms', 'max ms', `p95 ≤ ${TARGET_MS} ms`, 'API route behind it, p50 ms', 'page ÷ route p50'], rows);
  process.stdout.write(`\n${note}\n${misses.length === 0 ? 'Every page met the target.' : `Missed: ${misses.join(', ')}.`}\n`);
}
