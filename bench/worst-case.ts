/**
 * Issue #11 benchmark: can any request or mail stall the server? 8 clients
 * (support/worst-case-attackers.ts, their own process) send the worst inputs
 * of support/worst-inputs.ts to every CPU-heavy endpoint and the SMTP port of
 * `agentinfra serve` (embedded default: local word-vector embedder), while
 * this process probes `GET /health` every 50 ms and the server records
 * `perf_hooks.monitorEventLoopDelay` in its own process, sampled every 1 ms
 * (support/event-loop-delay-preload.mjs, read over IPC). "server CPU cores"
 * is the server's CPU time (all threads, from /proc) over the window's wall
 * time: how much of the 2 shared cores the load got.
 * Baseline: the same probe and event-loop measurement on the idle server,
 * measured in the same run. "probe loop delay" is this process's own
 * event-loop delay over the window (1 ms resolution): a /health answer that
 * arrives while the probe's process waits for a core is timed late by that
 * much, on the client's side. Then every attack mixed for WORST_CASE_SECONDS
 * (default 20), then each attack alone for WORST_CASE_ENDPOINT_SECONDS
 * (default 5, 0 = skip) to name the endpoint behind a stall, then each
 * input once, one request at a time, each in its own event-loop window:
 * the stall one input causes by itself (baseline: one GET /health).
 * Databases: SQLite in a temp folder, and PostgreSQL
 * (AGENTINFRA_TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test,
 * a fresh schema dropped at the end) when reachable.
 * Target, under the mixed load: /health p99 ≤ 20 ms and event-loop delay max ≤ 50 ms.
 *
 *   pnpm bench worst-case        (about 4 minutes on 2 shared cores; WORST_CASE_SECONDS=3 WORST_CASE_ENDPOINT_SECONDS=1 for a quick run)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, get, request } from 'node:http';
import { createServer } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { databaseUrl, displayDatabaseUrl } from './support/agentinfra-bench-server.js';
import { createAttackContext } from './support/attack-context.js';
import { createJsonClient } from './support/json-client.js';
import { percentiles } from './support/latency-percentiles.js';
import { BENCH_BRIDGE_KEY, benchServeEnv, printTable, type ServerProcess, startProcess } from './support/serve-process.js';
import type { AttackPlan, AttackTally } from './support/worst-case-attackers.js';
import { attacks } from './support/worst-inputs.js';

const SECONDS = Number(process.env.WORST_CASE_SECONDS ?? 20);
const ENDPOINT_SECONDS = Number(process.env.WORST_CASE_ENDPOINT_SECONDS ?? 5);
const CLIENTS = 8;
const PROBE_INTERVAL_MS = 50;
const PROBE_TIMEOUT_MS = 60_000;
const TARGET_HEALTH_P99_MS = 20;
const TARGET_LOOP_DELAY_MAX_MS = 50;
const AGENT = 'bench';
const MAIL_DOMAIN = 'worst-case.test';

const cli = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));
const preload = fileURLToPath(new URL('./support/event-loop-delay-preload.mjs', import.meta.url));
const attackers = fileURLToPath(new URL('./support/worst-case-attackers.ts', import.meta.url));

/** `perf_hooks` event-loop delay of the server over one window, in ms (sampled every 1 ms, so an idle loop reads about 1). */
interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  mean: number;
  count: number;
}

/** One measured window: the probe's /health latencies, the server's and the probe's event-loop delay, the server's CPU and the attackers' tallies. */
interface PhaseResult {
  seconds: number;
  health: { p50: number; p99: number; max: number; count: number; failures: number };
  loop: LoopDelay;
  /** This (the probe's) process's own event-loop delay over the window: the part of a /health latency spent waiting on the client side. */
  probeLoop: { p99: number; max: number };
  serverCpuMs: number;
  tallies: Record<string, AttackTally>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Sends `{ eventLoopDelay: command }` to the server and waits for its answer (event-loop-delay-preload.mjs). */
function eventLoopDelay(child: ChildProcess, command: 'reset' | 'report'): Promise<LoopDelay> {
  return new Promise((resolve) => {
    const onMessage = (message: { eventLoopDelay?: LoopDelay | 'reset' }) => {
      if (message?.eventLoopDelay === undefined) return;
      child.off('message', onMessage);
      resolve(message.eventLoopDelay as LoopDelay);
    };
    child.on('message', onMessage);
    child.send({ eventLoopDelay: command });
  });
}

/** Calls `GET /health` every 50 ms (without waiting for earlier answers) until `stop`, which resolves with the latencies. */
function startProbe(url: string): { stop(): Promise<PhaseResult['health']> } {
  const agent = new Agent({ keepAlive: true });
  const latencies: number[] = [];
  const pending = new Set<Promise<void>>();
  let failures = 0;
  const once = () => {
    const started = performance.now();
    const done = new Promise<void>((resolve) => {
      const request = get(`${url}/health`, { agent }, (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode === 200) latencies.push(performance.now() - started);
          else failures += 1;
          resolve();
        });
      });
      request.setTimeout(PROBE_TIMEOUT_MS, () => request.destroy(new Error('timeout')));
      request.on('error', () => {
        failures += 1;
        resolve();
      });
    });
    pending.add(done);
    done.finally(() => pending.delete(done));
  };
  const timer = setInterval(once, PROBE_INTERVAL_MS);
  once();
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      agent.destroy();
      const { p50, p99 } = percentiles(latencies);
      return { p50, p99, max: Math.max(...latencies), count: latencies.length, failures };
    },
  };
}

/** What each input did when sent alone, one request at a time: the server's event-loop stall around it and the answer's time. */
interface SoloResult {
  requests: number;
  stallMedian: number;
  stallMax: number;
  slowestMs: number;
}

const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

function getHealth(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${url}/health`, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/**
 * Sends `send(round)` for `rounds` rounds, one at a time from this process,
 * each in its own event-loop window of the server (reset, send, answer,
 * 20 ms, report), 100 ms apart: the longest stall one input causes by
 * itself, without other requests queued behind or beside it.
 */
async function oneAtATime(target: Target, rounds: number, send: (round: number) => Promise<unknown>): Promise<SoloResult> {
  const stalls: number[] = [];
  let slowestMs = 0;
  for (let round = 0; round < rounds; round += 1) {
    await pause(100);
    await eventLoopDelay(target.server.child, 'reset');
    const started = performance.now();
    await send(round).catch(() => undefined);
    slowestMs = Math.max(slowestMs, performance.now() - started);
    await pause(20);
    stalls.push((await eventLoopDelay(target.server.child, 'report')).max);
  }
  return { requests: rounds, stallMedian: percentiles(stalls).p50, stallMax: Math.max(...stalls), slowestMs };
}

/** Runs the attackers process; resolves once it has started sending, with a promise of its tallies. */
async function startAttackers(plan: AttackPlan): Promise<{ done: Promise<Record<string, AttackTally>> }> {
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), attackers, JSON.stringify(plan)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  let onStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (onStarted = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.startsWith('started\n')) onStarted();
  });
  const done = new Promise<Record<string, AttackTally>>((resolve, reject) =>
    child.once('exit', (code) => {
      const line = output.split('\n').find((text) => text.startsWith('result '));
      if (code === 0 && line) resolve(JSON.parse(line.slice('result '.length)) as Record<string, AttackTally>);
      else reject(new Error(`attackers exited with ${code}: ${output.slice(0, 500)}`));
    }),
  );
  await Promise.race([started, done]);
  return { done };
}

/** The agent, its device key and mail address on a freshly started server. */
interface Target {
  server: ServerProcess;
  smtpPort: number;
  deviceKey: string;
  address: string;
}

/** One window: the probe and the event-loop histogram run while the attackers run (or for `seconds` on the idle server). */
async function phase(target: Target, attackIndices: number[], seconds: number): Promise<PhaseResult> {
  const plan: AttackPlan = {
    url: target.server.url,
    smtpPort: target.smtpPort,
    deviceKey: target.deviceKey,
    bridgeKey: BENCH_BRIDGE_KEY,
    agentId: AGENT,
    address: target.address,
    attacks: attackIndices,
    clients: CLIENTS,
    seconds,
  };
  const load = attackIndices.length > 0 ? await startAttackers(plan) : undefined;
  await eventLoopDelay(target.server.child, 'reset');
  const probeLoop = monitorEventLoopDelay({ resolution: 1 });
  probeLoop.enable();
  const cpuBefore = target.server.cpuMs();
  const started = performance.now();
  const probe = startProbe(target.server.url);
  const tallies = load
    ? await load.done
    : await new Promise<Record<string, AttackTally>>((resolve) => setTimeout(() => resolve({}), seconds * 1000));
  const health = await probe.stop();
  probeLoop.disable();
  const loop = await eventLoopDelay(target.server.child, 'report');
  return {
    seconds: (performance.now() - started) / 1000,
    health,
    loop,
    probeLoop: { p99: probeLoop.percentile(99) / 1e6, max: probeLoop.max / 1e6 },
    serverCpuMs: target.server.cpuMs() - cpuBefore,
    tallies,
  };
}

/** Starts `agentinfra serve` on `database` (SMTP on a free port), creates the agent, its device key and mail address. */
async function startTarget(database: { url: string; schema: string } | undefined): Promise<Target & { stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-bench-worst-'));
  const smtpPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...benchServeEnv(dir),
    AGENTINFRA_LOG_LEVEL: 'error',
    AGENTINFRA_SMTP_PORT: String(smtpPort),
    AGENTINFRA_MAIL_DOMAIN: MAIL_DOMAIN,
    // Hostname claims look up a TXT record: refused at once by a resolver that is not there, never a slow lookup.
    AGENTINFRA_DNS_SERVERS: '127.0.0.1',
    ...(database ? { AGENTINFRA_DATABASE_URL: database.url, AGENTINFRA_DATABASE_SCHEMA: database.schema } : {}),
  };
  const server = await startProcess(['--import', preload, cli, 'serve'], { env, ipc: true });
  server.child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[agentinfra serve] ${chunk.toString()}`));
  const stop = async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const client = createJsonClient(`${server.url}/functions/v1`);
  try {
    const bridge = { authorization: `Bearer ${BENCH_BRIDGE_KEY}` };
    await client.post('/agent-identity/agents/create', { agent_id: AGENT, display_name: 'Worst case' }, bridge);
    const { device_key: deviceKey } = (
      await client.post<{ device_key: string }>('/agent-identity/device/issue', { agent_id: AGENT, label: 'worst-case' }, bridge)
    ).body;
    const { address } = (
      await client.post<{ address: string }>(
        '/agent-postbox/alloc',
        { agent_id: AGENT, local_part: AGENT },
        { authorization: `Bearer ${deviceKey}` },
      )
    ).body;
    return { server, smtpPort, deviceKey, address, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.close();
  }
}

const ms = (value: number) => value.toFixed(1);

function statuses(tallies: Record<string, AttackTally>): string {
  const sum: Record<string, number> = {};
  let failures = 0;
  for (const tally of Object.values(tallies)) {
    for (const [status, count] of Object.entries(tally.statuses)) sum[status] = (sum[status] ?? 0) + count;
    failures += tally.failures;
  }
  const parts = Object.entries(sum).map(([status, count]) => `${count}×${status}`);
  if (failures > 0) parts.push(`${failures} failed`);
  return parts.length > 0 ? parts.join(' ') : '–';
}

/** Runs every window on one database and prints its table; returns whether the target was met under the mixed load. */
async function measure(label: string, database: { url: string; schema: string } | undefined): Promise<boolean> {
  const target = await startTarget(database);
  try {
    const everything = attacks.map((_, index) => index);
    await phase(target, everything, 1);
    const idle = await phase(target, [], SECONDS);
    const mixed = await phase(target, everything, SECONDS);
    const alone: PhaseResult[] = [];
    if (ENDPOINT_SECONDS > 0) for (const index of everything) alone.push(await phase(target, [index], ENDPOINT_SECONDS));
    const context = createAttackContext({ ...target, url: target.server.url, bridgeKey: BENCH_BRIDGE_KEY, agentId: AGENT }, 0);
    const soloBaseline = await oneAtATime(target, 20, () => getHealth(target.server.url));
    const solo: SoloResult[] = [];
    for (const attack of attacks) solo.push(await oneAtATime(target, attack.variants, (round) => attack.run(context, round)));
    context.close();
    const met = (result: PhaseResult) => result.health.p99 <= TARGET_HEALTH_P99_MS && result.loop.max <= TARGET_LOOP_DELAY_MAX_MS;
    const row = (name: string, result: PhaseResult) => [
      name,
      result.seconds.toFixed(0),
      statuses(result.tallies),
      `${ms(result.health.p50)} / ${ms(result.health.p99)} / ${ms(result.health.max)}`,
      result.health.failures,
      `${(result.health.p99 / idle.health.p99).toFixed(2)}×`,
      `${ms(result.loop.p99)} / ${ms(result.loop.max)}`,
      `${ms(result.probeLoop.p99)} / ${ms(result.probeLoop.max)}`,
      (result.serverCpuMs / 1000 / result.seconds).toFixed(2),
      met(result) ? 'met' : 'NOT met',
    ];
    process.stdout.write(`\n### ${label}\n\n`);
    printTable(
      [
        'window',
        's',
        'answers (count×status)',
        '/health p50 / p99 / max ms',
        'probe failures',
        'p99 vs idle',
        'event-loop delay p99 / max ms',
        'probe loop delay p99 / max ms',
        'server CPU cores',
        'target',
      ],
      [
        row('idle server (baseline)', idle),
        row(`all attacks mixed, ${CLIENTS} clients`, mixed),
        ...alone.map((result, index) => row(`alone: ${attacks[index]!.name}`, result)),
      ],
    );
    process.stdout.write('\nEach input alone, one request at a time (the stall it causes by itself):\n\n');
    const soloRow = (name: string, result: SoloResult) => [
      name,
      result.requests,
      `${ms(result.stallMedian)} / ${ms(result.stallMax)}`,
      `${(result.stallMax / soloBaseline.stallMax).toFixed(2)}×`,
      result.slowestMs.toFixed(0),
    ];
    printTable(
      ['input', 'requests', 'event-loop delay median / max ms', 'max vs baseline', 'slowest answer ms'],
      [soloRow('GET /health (baseline)', soloBaseline), ...solo.map((result, index) => soloRow(attacks[index]!.name, result))],
    );
    const slowest = Object.entries(mixed.tallies).map(([name, tally]) => `${name.split(' (')[0]} ${tally.maxMs.toFixed(0)} ms`);
    process.stdout.write(`\nSlowest answer per attack under the mixed load: ${slowest.join('; ')}.\n`);
    const worst = alone.map((result, index) => ({ result, index })).sort((a, b) => b.result.loop.max - a.result.loop.max)[0];
    if (worst) {
      process.stdout.write(
        `Longest event-loop stall with one attack alone: ${ms(worst.result.loop.max)} ms, ${attacks[worst.index]!.name}.\n`,
      );
    }
    for (const [name, tally] of Object.entries(mixed.tallies)) {
      if (tally.failure) process.stdout.write(`First failure of ${name}: ${tally.failure}\n`);
    }
    return met(mixed);
  } finally {
    await target.stop();
  }
}

process.stdout.write(
  `## Worst-case inputs: ${CLIENTS} clients for ${SECONDS} s (each attack alone for ${ENDPOINT_SECONDS} s), /health probed every ${PROBE_INTERVAL_MS} ms\n`,
);
const verdicts: string[] = [];
verdicts.push(`SQLite ${(await measure('SQLite (temp folder)', undefined)) ? 'met' : 'NOT met'}`);
const schema = `bench_worst_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: databaseUrl });
const reachable = await admin.connect().then(
  () => true,
  (error: Error) => {
    process.stdout.write(`\nPostgreSQL (${displayDatabaseUrl(databaseUrl)}) skipped: ${error.message}\n`);
    return false;
  },
);
if (reachable) {
  try {
    verdicts.push(
      `PostgreSQL ${(await measure(`PostgreSQL (${displayDatabaseUrl(databaseUrl)}, schema ${schema})`, { url: databaseUrl, schema })) ? 'met' : 'NOT met'}`,
    );
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}
process.stdout.write(
  `\nLoad average ${loadavg()
    .map((value) => value.toFixed(1))
    .join(
      ' ',
    )} on ${availableParallelism()} cores. Target under the mixed load (/health p99 ≤ ${TARGET_HEALTH_P99_MS} ms, event-loop delay max ≤ ${TARGET_LOOP_DELAY_MAX_MS} ms): ${verdicts.join(', ')}.\n`,
);
