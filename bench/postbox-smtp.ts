/**
 * agent-postbox SMTP ingest throughput: parallel SMTP clients send 20 KB
 * messages (multipart text + HTML, unique Message-IDs) to the bundled MTA,
 * where every message is stored (raw MIME in the fs blob store with fsync,
 * row in SQL), parsed with mailparser, scored, filed by rules and listed
 * afterwards; baseline = a bare `smtp-server` sink that only reads the DATA
 * stream, measured in the same run with the same clients before, between and
 * after the postbox runs (each postbox run is compared with the mean of the
 * sink runs around it, as the load of a shared machine drifts).
 *
 *   npx tsx bench/postbox-smtp.ts        (about 2 minutes on 2 cores)
 *
 * The clients run in a child process (nodemailer, pooled connections) so
 * that their CPU is not charged to the server's event loop; the CPU time
 * (user + system) of the server process and of the client per message is
 * printed too, steadier than messages/s when other work shares the cores.
 * Databases:
 * SQLite in a temp folder, and PostgreSQL (AGENTINFRA_TEST_DATABASE_URL,
 * default postgres://postgres@127.0.0.1:5432/test, a fresh schema dropped
 * at the end) when reachable. Target: ≥ 50% of the sink's messages/s.
 * Env: MESSAGES (default 2000), CONNECTIONS (default 16).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONDITION = '@agentinfra/source';
const self = fileURLToPath(import.meta.url);
const root = join(dirname(self), '..');
const requireFromPostbox = createRequire(join(root, 'packages', 'module-postbox', 'package.json'));
const MESSAGES = Number(process.env.MESSAGES ?? 2_000);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 16);
const RECIPIENTS = ['agent0', 'agent1', 'agent2', 'agent3'];
const DOMAIN = 'bench.test';

/** The 20 KB message body parts: about 10 KB of text and 10 KB of HTML. */
function messageParts(index: number) {
  const paragraph =
    'Hello team, here is the weekly status. The migration finished on Tuesday, the new dashboard is live, and the on-call rotation for December is in the shared calendar. ';
  const text = `${paragraph.repeat(Math.ceil(10_000 / paragraph.length)).slice(0, 10_000)}\nMessage ${index}.`;
  const html = `<html><body>${`<p style="margin:0 0 12px;font-family:Arial">${paragraph}</p>`.repeat(55)}</body></html>`.slice(0, 10_000);
  return { text, html };
}

// ---- client role: sends MESSAGES messages over CONNECTIONS pooled connections, prints elapsed ms and its own CPU ms as JSON ----
if (process.argv[2] === '--client') {
  const port = Number(process.argv[3]);
  const nodemailer = requireFromPostbox('nodemailer') as typeof import('nodemailer');
  const transport = nodemailer.createTransport({
    pool: true,
    maxConnections: CONNECTIONS,
    maxMessages: Number.POSITIVE_INFINITY,
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
  });
  const run = process.argv[4] ?? 'run';
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next < MESSAGES) {
      const index = next++;
      const { text, html } = messageParts(index);
      try {
        await transport.sendMail({
          from: 'Status Bot <status@sender.example>',
          to: `${RECIPIENTS[index % RECIPIENTS.length]}@${DOMAIN}`,
          subject: `Weekly status ${index}`,
          text,
          html,
          messageId: `<${run}-${index}@sender.example>`,
        });
      } catch {
        failed += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS * 2 }, worker));
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuStarted);
  transport.close();
  process.stdout.write(JSON.stringify({ elapsed, failed, cpuMs: (cpu.user + cpu.system) / 1000 }));
  process.exit(0);
}

if (!process.execArgv.some((flag) => flag.includes(CONDITION)) && !process.env.NODE_OPTIONS?.includes(CONDITION)) {
  const child = spawnSync(process.execPath, [...process.execArgv, `--conditions=${CONDITION}`, self], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}

/** What one client run measured: messages/s, and CPU ms per accepted message of this server process (all threads) and of the client. */
interface DriveResult {
  perSecond: number;
  failed: number;
  elapsed: number;
  cpuMs: number;
  clientCpuMs: number;
}

/**
 * Runs the client process against `port`. The CPU times (user + system) are
 * steadier than messages/s on a shared machine: the client and the server
 * share its cores, so messages/s follows their sum.
 */
async function drive(port: number, run: string): Promise<DriveResult> {
  const cpuBefore = process.cpuUsage();
  const child = spawn(
    process.execPath,
    [...process.execArgv.filter((flag) => !flag.includes(CONDITION)), self, '--client', String(port), run],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, MESSAGES: String(MESSAGES), CONNECTIONS: String(CONNECTIONS) },
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await new Promise<void>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`client exited ${code}`)))),
  );
  const cpu = process.cpuUsage(cpuBefore);
  const client = JSON.parse(output) as { elapsed: number; failed: number; cpuMs: number };
  const accepted = MESSAGES - client.failed;
  return {
    perSecond: (accepted / client.elapsed) * 1000,
    failed: client.failed,
    elapsed: client.elapsed,
    cpuMs: (cpu.user + cpu.system) / 1000 / accepted,
    clientCpuMs: client.cpuMs / accepted,
  };
}

const { SMTPServer } = requireFromPostbox('smtp-server') as typeof import('smtp-server');
const { createSqliteDatabase } = await import('../packages/adapter-sqlite/src/index.js');
const { createPostgresDatabase } = await import('../packages/adapter-postgres/src/index.js');
const { createFsBlobStore } = await import('../packages/adapter-fs/src/index.js');
const core = await import('../packages/core/src/index.js');
const { identityModule } = await import('../packages/module-identity/src/index.js');
const { postboxModule } = await import('../packages/module-postbox/src/index.js');
type PostboxService = import('../packages/module-postbox/src/index.js').PostboxService;
type SqlDatabase = import('../packages/core/src/index.js').SqlDatabase;

/** Baseline: a bare smtp-server that accepts every recipient and only reads the DATA stream. */
interface Sink {
  /** One measured client run against the sink. */
  measure(): Promise<DriveResult>;
  close(): Promise<void>;
}

/** Starts the sink and warms it up (one unmeasured client run). */
async function startSink(): Promise<Sink> {
  let received = 0;
  const sink = new SMTPServer({
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    logger: false,
    size: 10 * 1024 * 1024,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received += 1;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const port = (sink.server.address() as AddressInfo).port;
  await drive(port, `warm-sink-${Date.now()}`);
  return {
    async measure() {
      received = 0;
      const result = await drive(port, `sink-${Date.now()}`);
      if (received !== MESSAGES) throw new Error(`The sink received ${received} of ${MESSAGES} messages.`);
      return result;
    },
    close: () => new Promise<void>((resolve) => sink.close(() => resolve())),
  };
}

/** The postbox on `db`: warm-up run, measured run, then every message listed and checked. */
async function measurePostbox(db: SqlDatabase): Promise<DriveResult & { listed: number; listMs: number; quarantined: number }> {
  const blobDir = await mkdtemp(join(tmpdir(), 'bench-postbox-blobs-'));
  const blobs = createFsBlobStore({ dir: blobDir, publicUrl: 'http://127.0.0.1:1', signingKey: randomBytes(32), durable: true });
  const logger = core.createLogger({ level: 'silent' });
  const config = core.coreConfigSchema.parse({
    bridgeKey: core.newCredential('bk_'),
    masterKey: randomBytes(32).toString('base64'),
    port: 0,
    log: { level: 'silent' },
  });
  const kernel = core.createKernel({
    config,
    modules: [identityModule, postboxModule],
    moduleConfigs: { 'agent-postbox': { mailDomain: DOMAIN, smtp: { port: 'auto', maxClients: 1_000 } } },
    adapters: { sql: db, blobStore: blobs.store, mounts: [blobs.mount], delivery: core.createHttpDelivery({ allowPrivate: true }) },
    logger,
  });
  await kernel.start();
  const service = kernel.service<PostboxService>('agent-postbox');
  for (const agent of RECIPIENTS) await service.alloc({ agent_id: agent, local_part: agent });
  const port = service.smtpAddress()?.port ?? 0;
  await drive(port, `warm-${Date.now()}`);
  const measuredRun = `run-${Date.now()}`;
  const result = await drive(port, measuredRun);
  const listStarted = performance.now();
  let listed = 0;
  let quarantined = 0;
  for (const agent of RECIPIENTS) {
    let since: string | null = null;
    for (;;) {
      const page = await service.list({ agent_id: agent, direction: 'in', limit: 500, since });
      for (const message of page.messages) {
        if (!message.headers['message-id']?.startsWith(`<${measuredRun}-`)) continue;
        if (!message.mime_ref || message.body.length < 9_000 || typeof message.injection_score !== 'number')
          throw new Error(`Message ${message.id} is incomplete.`);
        listed += 1;
        if (message.quarantined) quarantined += 1;
      }
      since = page.next_cursor;
      if (!page.has_more) break;
    }
  }
  const listMs = performance.now() - listStarted;
  await kernel.stop();
  await rm(blobDir, { recursive: true, force: true });
  if (listed !== MESSAGES - result.failed) throw new Error(`Listed ${listed} of ${MESSAGES - result.failed} accepted messages.`);
  return { ...result, listed, listMs, quarantined };
}

/**
 * The load of a shared machine drifts within a run, so each postbox run is
 * compared with the mean of the sink runs just before and just after it.
 */
const sink = await startSink();
const sinkRuns = [await sink.measure()];
const rows: string[] = [];
const ratios: string[] = [];
const clientCpu: string[] = [];
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const report = (label: string, result: Awaited<ReturnType<typeof measurePostbox>>, around: DriveResult[]) => {
  const ratio = result.perSecond / mean(around.map((run) => run.perSecond));
  rows.push(
    `| postbox on ${label} (stored, parsed, scored, listed) | ${result.perSecond.toFixed(0)} | ${ratio.toFixed(2)} | ${result.cpuMs.toFixed(2)} | ${result.failed} | ${result.listed} in ${result.listMs.toFixed(0)} ms |`,
  );
  ratios.push(`${label} ${ratio.toFixed(2)}`);
  clientCpu.push(`${label} ${result.clientCpuMs.toFixed(2)}`);
};

const sqliteDir = await mkdtemp(join(tmpdir(), 'bench-postbox-sqlite-'));
const sqlite = createSqliteDatabase({ filename: join(sqliteDir, 'bench.db') });
const onSqlite = await measurePostbox(sqlite);
await rm(sqliteDir, { recursive: true, force: true });
sinkRuns.push(await sink.measure());
report('SQLite', onSqlite, sinkRuns.slice(-2));

const url = process.env.AGENTINFRA_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_postbox_${randomBytes(4).toString('hex')}`;
const postgres = createPostgresDatabase({ url, schema, poolMax: 10 });
try {
  await postgres.ping();
  const onPostgres = await measurePostbox(postgres);
  sinkRuns.push(await sink.measure());
  report('PostgreSQL', onPostgres, sinkRuns.slice(-2));
} catch (error) {
  rows.push(`| postbox on PostgreSQL | skipped: ${(error as Error).message.split('\n')[0]} | | | | |`);
} finally {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect().then(
    async () => {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
    () => undefined,
  );
}
await sink.close();

const sinkRates = sinkRuns.map((run) => run.perSecond.toFixed(0)).join(', ');
console.log(`## agent-postbox SMTP ingest: ${MESSAGES} messages of 20 KB, ${CONNECTIONS} pooled client connections\n`);
console.log('| server | messages/s | vs sink | server CPU ms/msg | failed | listed afterwards |');
console.log('|---|---:|---:|---:|---:|---|');
console.log(
  `| bare smtp-server sink (reads the stream only; runs ${sinkRates}) | ${mean(sinkRuns.map((run) => run.perSecond)).toFixed(0)} | 1.00 | ${mean(sinkRuns.map((run) => run.cpuMs)).toFixed(2)} | ${sinkRuns.reduce((sum, run) => sum + run.failed, 0)} | – |`,
);
for (const row of rows) console.log(row);
console.log();
console.log(
  `Client CPU ms/msg (nodemailer, the same process for every server): sink ${mean(sinkRuns.map((run) => run.clientCpuMs)).toFixed(2)}, ${clientCpu.join(', ')}; load average ${loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')} on ${availableParallelism()} cores.`,
);
console.log(`Ratio to the sink runs before and after (target ≥ 0.50): ${ratios.join(', ')}.`);
