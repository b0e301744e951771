/**
 * Issue #2 benchmark: authenticated /mem/write and /mem/query throughput at
 * 10k and 100k semantic memories on the embedded default (SQLite file, local
 * word-vector embedder), against a bare Hono JSON route on the same HTTP
 * stack (the baseline, measured in the same run). Also start-up time and
 * idle RSS of `agentinfra serve`.
 * Targets: /mem/write ≥ 40 % of the bare route; /mem/query p50 ≤ 20 ms at 100k;
 * metrics and the audit log (on by default) cost ≤ 5 % of writes/s (issue #15).
 * Each row also gives the server's CPU time per request (all its threads,
 * from /proc), steadier than the rates on a machine shared with other work.
 * The episode row (memories that are neither embedded nor indexed) times
 * the request path alone: HTTP, authentication, validation, the record
 * insert and the answer.
 * BENCH_CLI picks the `agentinfra` build to measure (default: this
 * checkout's packages/cli/dist/bin.js); point it at another checkout's build
 * to compare against an earlier commit in the same run.
 */
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { BENCH_BRIDGE_KEY, benchServeEnv, printTable, type ServerProcess, startProcess } from './support/serve-process.js';

const cli = process.env.BENCH_CLI ?? fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));
const bare = fileURLToPath(new URL('./support/bare-server.mjs', import.meta.url));
const SMALL = Number(process.env.BENCH_SMALL ?? 10_000);
const LARGE = Number(process.env.BENCH_LARGE ?? 100_000);
const CONNECTIONS = 8;

const topics = [
  'deploy',
  'database',
  'editor',
  'invoice',
  'meeting',
  'customer',
  'release',
  'incident',
  'budget',
  'travel',
  'hiring',
  'security',
];
const verbs = ['prefers', 'scheduled', 'reported', 'approved', 'rejected', 'asked about', 'fixed', 'postponed', 'reviewed', 'documented'];
const objects = [
  'the staging cluster',
  'dark mode',
  'the quarterly report',
  'the on-call rotation',
  'a flight to Berlin',
  'the API keys',
  'the onboarding guide',
  'the billing export',
];
function sentence(i: number): string {
  const pick = <T>(list: readonly T[], salt: number) => list[((i * 2654435761 + salt) % list.length) >>> 0]!;
  return `Note ${i}: the ${pick(topics, 1)} owner ${pick(verbs, 7)} ${pick(objects, 13)} during the ${pick(topics, 29)} review.`;
}

async function post(url: string, path: string, body: unknown, credential: string) {
  const response = await fetch(`${url}/functions/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${credential}` },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<Record<string, string>>;
}

/** Requests per second, latency percentiles (ms) and the server's CPU time per request (µs, all its threads). */
interface Result {
  rate: number;
  p50: number;
  p99: number;
  cpuUs: number;
}

/**
 * Runs autocannon against `server` and measures the rate itself: answered
 * requests ÷ time from the first request sent to the last answer (autocannon's
 * own average counts whole seconds, so a run of `amount` requests ends on its
 * next 1-second tick). The server's CPU time comes from /proc, a steadier
 * figure than the rate on a machine shared with other work.
 * @throws Error on any non-2xx answer or connection error.
 */
async function load(options: {
  server: ServerProcess;
  url: string;
  connections?: number;
  amount?: number;
  duration?: number;
  headers?: Record<string, string>;
  body: (i: number) => unknown;
}): Promise<Result> {
  let i = 0;
  let answered = 0;
  let firstSentAt = Number.NaN;
  let lastAnsweredAt = Number.NaN;
  const cpuBefore = options.server.cpuMs();
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    connections: options.connections ?? CONNECTIONS,
    ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? 10 }),
    headers: { 'content-type': 'application/json', ...options.headers },
    requests: [
      {
        setupRequest: (request: autocannon.Request) => {
          if (i === 0) firstSentAt = performance.now();
          return { ...request, body: JSON.stringify(options.body(i++)) };
        },
        onResponse: () => {
          answered += 1;
          lastAnsweredAt = performance.now();
        },
      },
    ],
  });
  const cpuUs = ((options.server.cpuMs() - cpuBefore) * 1000) / Math.max(1, answered);
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors against ${options.url}`);
  return { rate: answered / ((lastAnsweredAt - firstSentAt) / 1000), p50: result.latency.p50, p99: result.latency.p99, cpuUs };
}

/**
 * Starts `agentinfra serve` on a fresh data folder with `extra` variables,
 * creates agent `bench` and issues it a device key.
 * @returns the server and the `authorization` header of the key.
 */
async function startMemoryServer(extra: Record<string, string> = {}) {
  const data = mkdtempSync(join(tmpdir(), 'agentinfra-bench-'));
  const started = await startProcess([cli, 'serve'], {
    env: { ...benchServeEnv(data), ...extra },
  });
  await post(started.url, 'agent-identity/agents/create', { agent_id: 'bench', display_name: 'Bench' }, BENCH_BRIDGE_KEY);
  const { device_key: key } = await post(
    started.url,
    'agent-identity/device/issue',
    { agent_id: 'bench', label: 'bench' },
    BENCH_BRIDGE_KEY,
  );
  return { server: started, auth: { authorization: `Bearer ${key}` } };
}

const writeBody = (i: number) => ({
  agent_id: 'bench',
  kind: 'semantic',
  text: sentence(i),
  provenance: `bench-${i % 50}`,
  scope: ['self'],
});
const episodeBody = (i: number) => ({ ...writeBody(i), kind: 'episode' });
const queryBody = (i: number) => ({ agent_id: 'bench', q: sentence(i * 7919 + 3).slice(8), k: 10, scope: ['self'] });

const { server, auth } = await startMemoryServer();
const idleRss = server.rssMb();
const baseline = await startProcess([bare]);
try {
  const writeUrl = `${server.url}/functions/v1/agent-memory/mem/write`;
  const queryUrl = `${server.url}/functions/v1/agent-memory/mem/query`;

  const bareRun = await load({ server: baseline, url: `${baseline.url}/bare`, duration: 10, body: writeBody });
  let offset = 0;
  const writeSmall = await load({ server, url: writeUrl, amount: SMALL, headers: auth, body: (i) => writeBody(offset + i) });
  offset += SMALL;
  const warmRss = server.rssMb();
  const querySmall = await load({ server, url: queryUrl, connections: 1, duration: 10, headers: auth, body: queryBody });
  const writeLarge = await load({ server, url: writeUrl, amount: LARGE - SMALL, headers: auth, body: (i) => writeBody(offset + i) });
  const queryLarge = await load({ server, url: queryUrl, connections: 1, duration: 10, headers: auth, body: queryBody });
  const writeEpisodes = await load({ server, url: writeUrl, amount: SMALL, headers: auth, body: (i) => episodeBody(offset + i) });
  const ratio = (value: number) => `${((value / bareRun.rate) * 100).toFixed(0)} %`;
  const row = (name: string, r: Result) => [name, r.rate.toFixed(0), r.p50, r.p99, r.cpuUs.toFixed(0), ratio(r.rate)];
  printTable(
    ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'vs bare route'],
    [
      row('bare Hono JSON route (baseline)', bareRun),
      row(`/mem/write, 0 → ${SMALL / 1000}k memories`, writeSmall),
      row(`/mem/query at ${SMALL / 1000}k`, querySmall),
      row(`/mem/write, ${SMALL / 1000}k → ${LARGE / 1000}k memories`, writeLarge),
      row(`/mem/query at ${LARGE / 1000}k`, queryLarge),
      row(`/mem/write episode (not embedded or indexed), ${SMALL / 1000}k`, writeEpisodes),
    ],
  );
  process.stdout.write(
    `\nWrites and the bare route with ${CONNECTIONS} connections, queries with 1 (latency of one query); autocannon in the benchmark process, each server in its own process, 2 cores shared; load average ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}.\n`,
  );
  printTable(
    ['serve (embedded default)', 'value', 'target'],
    [
      ['start to `listening on` (ms)', server.readyMs.toFixed(0), '≤ 1000'],
      ['idle RSS before first embed (MB)', idleRss.toFixed(0), '≤ 150'],
      [`RSS after ${SMALL / 1000}k writes (MB)`, warmRss.toFixed(0), ''],
      [`RSS at ${LARGE / 1000}k memories (MB)`, server.rssMb().toFixed(0), ''],
    ],
  );
  const writeOk = writeSmall.rate / bareRun.rate >= 0.4;
  const queryOk = queryLarge.p50 <= 20;
  process.stdout.write(
    `\n/mem/write ≥ 40 % of bare: ${writeOk ? 'met' : 'NOT met'}; /mem/query p50 ≤ 20 ms at ${LARGE / 1000}k: ${queryOk ? 'met' : 'NOT met'}\n`,
  );
} finally {
  await server.stop();
  await baseline.stop();
}

/**
 * Cost of metrics and the audit log (issue #15): /mem/write 0 → SMALL on a
 * fresh server with both on (the default) and with both off, alternating
 * for OBSERVABILITY_ROUNDS rounds in this run. Target: ≤ 5 % fewer writes/s.
 */
const OBSERVABILITY_ROUNDS = Number(process.env.BENCH_OBSERVABILITY_ROUNDS ?? 2);
const modes = [
  ['metrics and audit on (default)', {}],
  ['metrics and audit off', { AGENTINFRA_METRICS_ENABLED: 'false', AGENTINFRA_AUDIT_ENABLED: 'false' }],
] as const;
const observed: Array<{ mode: string; round: number; result: Result }> = [];
for (let round = 1; round <= OBSERVABILITY_ROUNDS; round += 1) {
  for (const [mode, extra] of modes) {
    const fresh = await startMemoryServer(extra);
    try {
      const url = `${fresh.server.url}/functions/v1/agent-memory/mem/write`;
      observed.push({
        mode,
        round,
        result: await load({ server: fresh.server, url, amount: SMALL, headers: fresh.auth, body: writeBody }),
      });
    } finally {
      await fresh.server.stop();
    }
  }
}
const meanRate = (mode: string) => {
  const rates = observed.filter((entry) => entry.mode === mode).map((entry) => entry.result.rate);
  return rates.reduce((sum, rate) => sum + rate, 0) / Math.max(1, rates.length);
};
const off = meanRate(modes[1][0]);
process.stdout.write('\n');
printTable(
  [`/mem/write 0 → ${SMALL / 1000}k`, 'round', 'req/s', 'server CPU µs/req', 'vs off'],
  observed.map(({ mode, round, result }) => [
    mode,
    String(round),
    result.rate.toFixed(0),
    result.cpuUs.toFixed(0),
    `${((result.rate / off) * 100).toFixed(0)} %`,
  ]),
);
const cost = 1 - meanRate(modes[0][0]) / off;
process.stdout.write(`
Metrics and audit cost ${(cost * 100).toFixed(1)} % of writes/s (mean of ${OBSERVABILITY_ROUNDS} rounds): ${cost <= 0.05 ? 'met' : 'NOT met'} (target ≤ 5 %)\n`);
