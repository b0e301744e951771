/**
 * Scheduler fire lateness and throughput on PostgreSQL: 10 000 jobs due in
 * the same minute fire through the core job runner and POST signed callbacks
 * to a loopback receiver; baseline = a bare loop that only POSTs the same
 * signed deliveries to the same receiver (`HttpDelivery.send`, as many in
 * flight as the runner's concurrency), measured in the same run.
 *
 *   npx tsx bench/scheduler-lateness.ts     (about 3 minutes on 2 cores)
 *
 * Database: AGENTINFRA_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test),
 * a fresh schema dropped at the end. One kernel (one process), job runner
 * concurrency 64 and poll interval 100 ms (override with BENCH_JOB_CONCURRENCY
 * and BENCH_JOB_POLL_MS), PostgreSQL pool of 20.
 * Scenarios: "spread" = 10 000 one-shot 6-field cron jobs, ~167 due on each
 * second of one minute; "burst" = 10 000 jobs due on the same second.
 * Lateness = callback received − scheduled instant. "vs baseline" =
 * callbacks/s ÷ bare-loop callbacks/s. Target: spread p99 lateness ≤ 1 s.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const CONDITION = '@agentinfra/source';
if (!process.execArgv.some((flag) => flag.includes(CONDITION)) && !process.env.NODE_OPTIONS?.includes(CONDITION)) {
  // Re-run with workspace packages resolved to their TypeScript sources, so core is loaded once.
  const child = spawnSync(process.execPath, [...process.execArgv, `--conditions=${CONDITION}`, fileURLToPath(import.meta.url)], {
    stdio: 'inherit',
  });
  process.exit(child.status ?? 1);
}

const { createPostgresDatabase } = await import('../packages/adapter-postgres/src/index.js');
const core = await import('../packages/core/src/index.js');
const { schedulerModule } = await import('../packages/module-scheduler/src/index.js');
type SchedulerService = import('../packages/module-scheduler/src/index.js').SchedulerService;

const JOBS = 10_000;
const CONCURRENCY = Number(process.env.BENCH_JOB_CONCURRENCY ?? 64);
const POLL_INTERVAL_MS = Number(process.env.BENCH_JOB_POLL_MS ?? 100);
const PUTS_IN_FLIGHT = 16;
const url = process.env.AGENTINFRA_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

interface Received {
  scheduledFor: number;
  receivedAt: number;
  runId: string;
}

const received: Received[] = [];
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const receivedAt = Date.now();
    if (request.url === '/job') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { scheduled_for: string; run_id: string } };
      received.push({ scheduledFor: Date.parse(body.data.scheduled_for), receivedAt, runId: body.data.run_id });
    }
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const schema = `bench_${randomBytes(4).toString('hex')}`;
const sql = createPostgresDatabase({ url, schema, poolMax: 20 });
const delivery = core.createHttpDelivery({ allowPrivate: true });
const kernel = core.createKernel({
  config: core.coreConfigSchema.parse({
    bridgeKey: core.newCredential('bk_'),
    masterKey: core.newMasterKey(),
    port: 0,
    jobs: { pollIntervalMs: POLL_INTERVAL_MS, concurrency: CONCURRENCY },
  }),
  modules: [schedulerModule],
  adapters: { sql, delivery },
  logger: core.createLogger({ level: 'silent' }),
});
await kernel.start();
const scheduler = kernel.service<SchedulerService>('agent-scheduler');

/** Runs `task(i)` for i in [0, total) with `inFlight` at once. */
async function pool(total: number, inFlight: number, task: (index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const index = next;
        next += 1;
        await task(index);
      }
    }),
  );
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** A 6-field UTC cron expression firing at `at` (whole second) and next a year later. */
function cronAt(at: number): string {
  const date = new Date(at);
  return `${date.getUTCSeconds()} ${date.getUTCMinutes()} ${date.getUTCHours()} ${date.getUTCDate()} ${date.getUTCMonth() + 1} *`;
}

/** Puts JOBS jobs, job i due at `instantOf(i)`. @returns seconds the puts took. */
async function putJobs(prefix: string, instantOf: (index: number) => number): Promise<number> {
  const started = performance.now();
  await pool(JOBS, PUTS_IN_FLIGHT, (index) =>
    scheduler.putJob({
      agent_id: `agent-${index % 100}`,
      name: `${prefix}-${index}`,
      cadence: cronAt(instantOf(index)),
      callback_url: `${target}/job`,
      secret: core.newWebhookSecret(),
      max_attempts: 3,
      catch_up: 'once',
    }),
  );
  return (performance.now() - started) / 1000;
}

/** Waits until `count` callbacks arrived after index `from`, or none came for 20 s after `due`, or `deadline`. */
async function awaitCallbacks(from: number, count: number, due: number, deadline: number): Promise<Received[]> {
  let seen = 0;
  let lastProgress = Date.now();
  while (received.length - from < count && Date.now() < deadline) {
    await sleep(100);
    if (received.length !== seen) {
      seen = received.length;
      lastProgress = Date.now();
    } else if (Date.now() > due && Date.now() - Math.max(lastProgress, due) > 20_000) break;
  }
  return received.slice(from);
}

interface Row {
  scenario: string;
  callbacks: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
}

function summarize(scenario: string, batch: Received[], firstDue: number): Row {
  const lateness = batch.map((entry) => entry.receivedAt - entry.scheduledFor).sort((a, b) => a - b);
  const last = Math.max(...batch.map((entry) => entry.receivedAt));
  const distinctRuns = new Set(batch.map((entry) => entry.runId)).size;
  if (distinctRuns !== batch.length) console.warn(`${scenario}: ${batch.length - distinctRuns} duplicate callbacks`);
  return {
    scenario,
    callbacks: batch.length,
    perSecond: batch.length / ((last - firstDue) / 1000),
    p50: percentile(lateness, 0.5),
    p99: percentile(lateness, 0.99),
    max: lateness.at(-1) ?? Number.NaN,
  };
}

try {
  // Baseline: the bare loop, before any job is due.
  const baselineStart = performance.now();
  await pool(JOBS, CONCURRENCY, (index) =>
    delivery.send({
      url: `${target}/baseline`,
      secrets: [core.newWebhookSecret()],
      messageId: `b_${index}`,
      type: 'job.run',
      data: { index },
    }),
  );
  const baselinePerSecond = JOBS / ((performance.now() - baselineStart) / 1000);

  // Spread: ~167 jobs due on each second of one minute, starting 45 s from now (the puts happen first).
  const windowStart = Math.ceil((Date.now() + 45_000) / 1000) * 1000;
  const spreadFrom = received.length;
  const spreadPutSeconds = await putJobs('spread', (index) => windowStart + (index % 60) * 1000);
  const spreadLateStart = Date.now() > windowStart;
  await sleep(windowStart - Date.now());
  const spread = summarize(
    'spread: 10k due over one minute',
    await awaitCallbacks(spreadFrom, JOBS, windowStart + 60_000, windowStart + 240_000),
    windowStart,
  );

  // Burst: every job due on the same second, after the puts (a job put after that second would fire only next year).
  const burstAt = Math.ceil((Date.now() + spreadPutSeconds * 2000 + 10_000) / 1000) * 1000;
  const burstFrom = received.length;
  await putJobs('burst', () => burstAt);
  const burstLateStart = Date.now() > burstAt;
  await sleep(burstAt - Date.now());
  const burst = summarize('burst: 10k due on the same second', await awaitCallbacks(burstFrom, JOBS, burstAt, burstAt + 240_000), burstAt);

  const ms = (value: number) => `${Math.round(value)} ms`;
  console.log(
    `\nScheduler fire lateness on PostgreSQL (${sql.describe()}), 1 kernel, job concurrency ${CONCURRENCY}, poll ${POLL_INTERVAL_MS} ms\n`,
  );
  console.log('| scenario | callbacks | callbacks/s | lateness p50 | lateness p99 | lateness max | vs baseline |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  console.log(
    `| baseline: bare HttpDelivery.send loop, ${CONCURRENCY} in flight | ${JOBS} | ${baselinePerSecond.toFixed(0)} | – | – | – | 1.00 |`,
  );
  for (const row of [spread, burst]) {
    console.log(
      `| ${row.scenario} | ${row.callbacks} | ${row.perSecond.toFixed(0)} | ${ms(row.p50)} | ${ms(row.p99)} | ${ms(row.max)} | ${(row.perSecond / baselinePerSecond).toFixed(2)} |`,
    );
  }
  console.log(
    `\nPuts: ${(JOBS / spreadPutSeconds).toFixed(0)} /job/put per second (${PUTS_IN_FLIGHT} in flight).` +
      ` Spread callbacks/s is bounded by the arrival rate (~${(JOBS / 60).toFixed(0)}/s).` +
      ` Target spread p99 ≤ 1 s: ${spread.p99 <= 1_000 ? 'met' : 'NOT met'}.`,
  );
  for (const [scenario, late, row] of [
    ['spread', spreadLateStart, spread],
    ['burst', burstLateStart, burst],
  ] as const) {
    if (late) console.log(`Warning: the ${scenario} puts ended after the first instant was due; the figures include that delay.`);
    if (row.callbacks < JOBS) console.log(`Warning: ${scenario}: ${JOBS - row.callbacks} callbacks did not arrive.`);
  }
} finally {
  await kernel.stop();
  const admin = createPostgresDatabase({ url, poolMax: 1 });
  await admin.knex.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.close();
  await new Promise<void>((resolve) => {
    receiver.closeAllConnections();
    receiver.close(() => resolve());
  });
}
