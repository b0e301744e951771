/**
 * Certificate issuance through agent-gateway against pebble
 * (PEBBLE_VA_ALWAYS_VALID=1, PEBBLE_VA_NOSLEEP=1): the time from 50
 * concurrent POST /cert/issue calls to 50 certificates stored in the
 * database, against the baseline of the same 50 orders made directly with
 * acme-client in a sequential loop (new order, authorization, challenge,
 * finalize with an ECDSA P-256 CSR, download), on the same pebble. Each
 * gateway row gets its own baseline run just before it, so that load from
 * other processes on the machine hits both alike. Target: gateway ≤ 1.2×
 * the direct loop.
 *
 *   bash .ci/start-pebble.sh && npx tsx bench/gateway-issue.ts      (about 4 minutes on 2 cores)
 *
 * Both sides poll the CA with the same back-off (first poll delay
 * BENCH_ACME_POLL_MIN_MS, default 100 ms) and have their ACME account
 * registered and one warm-up certificate issued before timing. The gateway
 * runs in this process on SQLite, and on PostgreSQL when
 * AGENTINFRA_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
 * answers (a fresh schema, dropped at the end), three ways: the core job
 * runner's defaults (8 jobs at a time, 1 s idle poll: a finished job does
 * not wake the runner, so the next batch can wait up to 1 s); the same with
 * jobs.pollIntervalMs 100; and one order at a time (jobs.concurrency 1,
 * poll 50 ms), which shows the gateway's own cost per order (state in SQL,
 * sealed keys, the job runner). "vs baseline" = gateway time ÷ direct-loop
 * time (lower is better).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONDITION = '@agentinfra/source';
if (!process.execArgv.some((flag) => flag.includes(CONDITION)) && !process.env.NODE_OPTIONS?.includes(CONDITION)) {
  // Re-run with workspace packages resolved to their TypeScript sources, so core is loaded once.
  const child = spawnSync(process.execPath, [...process.execArgv, `--conditions=${CONDITION}`, fileURLToPath(import.meta.url)], {
    stdio: 'inherit',
  });
  process.exit(child.status ?? 1);
}

const acme = (await import('acme-client')).default;
const { createPostgresDatabase } = await import('@agentinfra/adapter-postgres');
const { createSqliteDatabase } = await import('@agentinfra/adapter-sqlite');
const { coreConfigSchema, createKernel, createLogger, newCredential, newMasterKey } = await import('@agentinfra/core');
type SqlDatabase = import('@agentinfra/core').SqlDatabase;
const { probePostgres, testDatabaseUrl } = await import('@agentinfra/testkit');
const { identityModule } = await import('../packages/module-identity/src/index.js');
const { gatewayModule, trustAcmeServerCa } = await import('../packages/module-gateway/src/index.js');
const { startChallTestServer } = await import('../packages/module-gateway/src/test-support/challtestsrv.js');
const { startPebble } = await import('../packages/module-gateway/src/test-support/pebble.js');

const HOSTS = 50;
const POLL_MIN_MS = Number(process.env.BENCH_ACME_POLL_MIN_MS ?? 100);
const backoff = { backoffMin: POLL_MIN_MS, backoffMax: 10_000, backoffAttempts: 15 };

/** The fields of gateway answers this benchmark reads. */
interface ApiBody {
  order_id?: string;
  error?: { details: { record_name: string; record_value: string } };
}

interface Row {
  path: string;
  database: string;
  totalMs: number;
  /** The direct loop run just before this row. */
  baselineMs: number;
}

const dns = await startChallTestServer();
const pebble = await startPebble({ alwaysValid: true, dnsServer: dns.dnsServer });
trustAcmeServerCa({ directoryUrl: pebble.directoryUrl, caPem: pebble.caPem });
const rows: Row[] = [];
let runId = 0;

/** One complete order with acme-client, as its README shows (no library beyond it). */
async function directOrder(client: InstanceType<typeof acme.Client>, host: string): Promise<string> {
  const order = await client.createOrder({ identifiers: [{ type: 'dns', value: host }] });
  for (const authz of await client.getAuthorizations(order)) {
    const challenge = authz.challenges.find((candidate) => candidate.type === 'http-01');
    if (!challenge) throw new Error('no http-01 challenge');
    await client.getChallengeKeyAuthorization(challenge);
    await client.completeChallenge(challenge);
    await client.waitForValidStatus(authz);
  }
  const key = await acme.crypto.createPrivateEcdsaKey('P-256');
  const [, csr] = await acme.crypto.createCsr({ commonName: host, altNames: [host] }, key);
  const finalized = await client.finalizeOrder(order, csr);
  const valid = finalized.status === 'valid' ? finalized : await client.waitForValidStatus(finalized);
  return client.getCertificate(valid);
}

let directClient: InstanceType<typeof acme.Client> | undefined;

/** The baseline: {@link HOSTS} orders made directly with acme-client, one after another. @returns milliseconds. */
async function directLoop(): Promise<number> {
  if (!directClient) {
    directClient = new acme.Client({
      directoryUrl: pebble.directoryUrl,
      accountKey: await acme.crypto.createPrivateEcdsaKey('P-256'),
      ...backoff,
    });
    await directClient.createAccount({ termsOfServiceAgreed: true });
    await directOrder(directClient, 'warmup.direct.bench.test');
  }
  runId += 1;
  const started = performance.now();
  for (let i = 0; i < HOSTS; i += 1) await directOrder(directClient, `h${i}.r${runId}.direct.bench.test`);
  return performance.now() - started;
}

async function gateway(
  database: string,
  db: SqlDatabase,
  jobs: { concurrency?: number; pollIntervalMs?: number },
  label: string,
): Promise<void> {
  runId += 1;
  const config = coreConfigSchema.parse({
    bridgeKey: newCredential('bk_'),
    masterKey: newMasterKey(),
    port: 0,
    jobs,
    http: { rateLimitPerMinute: 0 },
  });
  const kernel = createKernel({
    config,
    modules: [identityModule, gatewayModule],
    moduleConfigs: {
      'agent-gateway': {
        directoryUrl: pebble.directoryUrl,
        caFile: pebble.caFile,
        dnsServers: [dns.dnsServer],
        httpPort: 0,
        acmePollMinMs: POLL_MIN_MS,
        acmePollMaxMs: 10_000,
        acmePollAttempts: 15,
      },
    },
    adapters: { sql: db },
    logger: createLogger({ level: 'silent' }),
  });
  const { url } = await kernel.listen({ port: 0, host: '127.0.0.1' });
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`${url}/functions/v1/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${config.bridgeKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as ApiBody };
  };
  try {
    await call('agent-identity/agents/create', { agent_id: 'bench', display_name: 'bench' });
    const domain = `r${runId}.gateway.bench.test`;
    const hosts = Array.from({ length: HOSTS }, (_, i) => `h${i}.${domain}`);
    for (const host of [`warmup.${domain}`, ...hosts]) {
      const first = await call('agent-gateway/host/claim', { agent_id: 'bench', host });
      const details = first.body.error?.details;
      if (!details) throw new Error(`claim of ${host} gave no TXT challenge`);
      await dns.setTxt(details.record_name, details.record_value);
      if ((await call('agent-gateway/host/claim', { agent_id: 'bench', host })).status !== 200) throw new Error(`claim of ${host} failed`);
    }
    const stored = async (orderIds: string[]) => {
      for (;;) {
        const done = (await db
          .knex('gateway_orders')
          .whereIn('order_id', orderIds)
          .whereIn('status', ['valid', 'failed'])
          .select('status')) as Array<{ status: string }>;
        if (done.length === orderIds.length) {
          const failed = done.filter((row) => row.status !== 'valid').length;
          if (failed > 0) throw new Error(`${failed} orders failed`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    await stored([String((await call('agent-gateway/cert/issue', { host: `warmup.${domain}` })).body.order_id)]);
    const baselineMs = await directLoop();
    const started = performance.now();
    const issued = await Promise.all(hosts.map((host) => call('agent-gateway/cert/issue', { host })));
    await stored(issued.map((response) => String(response.body.order_id)));
    rows.push({ path: label, database, totalMs: performance.now() - started, baselineMs });
    const certificates = await db.knex('gateway_certificates').whereIn('host', hosts).count({ n: '*' });
    if (Number(certificates[0]?.n) !== HOSTS) throw new Error('not every certificate was stored');
  } finally {
    await kernel.stop();
  }
}

async function onEachDatabase(run: (database: string, db: SqlDatabase) => Promise<void>): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), 'agentinfra-bench-gateway-'));
  try {
    await run('sqlite', createSqliteDatabase({ filename: join(folder, `bench-${randomBytes(4).toString('hex')}.db`) }));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
  const url = testDatabaseUrl();
  if (!(await probePostgres(url)).reachable) {
    console.warn(`[bench] PostgreSQL at ${url} not reachable; its rows are left out`);
    return;
  }
  const schema = `bench_gateway_${randomBytes(4).toString('hex')}`;
  try {
    await run('postgres', createPostgresDatabase({ url, schema, poolMax: 10 }));
  } finally {
    const admin = createPostgresDatabase({ url, poolMax: 1 });
    await admin.knex.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.close();
  }
}

try {
  await onEachDatabase(async (database, db) => {
    await gateway(database, db, {}, `gateway: ${HOSTS} concurrent /cert/issue (job runner defaults: 8 at a time, poll 1 s)`);
  });
  await onEachDatabase(async (database, db) => {
    await gateway(database, db, { pollIntervalMs: 100 }, `gateway: ${HOSTS} concurrent /cert/issue (jobs.pollIntervalMs 100)`);
  });
  await onEachDatabase(async (database, db) => {
    await gateway(database, db, { concurrency: 1, pollIntervalMs: 50 }, 'gateway: one order at a time (jobs.concurrency 1)');
  });
} finally {
  await pebble.stop();
  await dns.stop();
}

console.log(
  `Issuing ${HOSTS} certificates against pebble (always valid, no sleep); first CA poll after ${POLL_MIN_MS} ms on both sides; ` +
    'each gateway row is compared with a direct acme-client loop run just before it.\n',
);
console.log('| path | database | gateway (ms) | per certificate (ms) | direct loop (ms) | vs baseline |');
console.log('|---|---|---:|---:|---:|---:|');
for (const row of rows) {
  const cells = [
    row.path,
    row.database,
    row.totalMs.toFixed(0),
    (row.totalMs / HOSTS).toFixed(1),
    row.baselineMs.toFixed(0),
    `${(row.totalMs / row.baselineMs).toFixed(2)}×`,
  ];
  console.log(`| ${cells.join(' | ')} |`);
}
const concurrent = rows.filter((row) => row.path.includes('concurrent')).map((row) => row.totalMs / row.baselineMs);
const worst = Math.max(...concurrent);
const best = Math.min(...concurrent);
const verdict = worst <= 1.2 ? 'met by every row' : best <= 1.2 ? 'met by some rows' : 'NOT met';
console.log(
  `\nTarget: ${HOSTS} concurrent issues ≤ 1.2× the direct loop — ${verdict} (best ${best.toFixed(2)}×, worst ${worst.toFixed(2)}×).`,
);
