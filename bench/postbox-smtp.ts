/**
 * agent-postbox SMTP ingest throughput: parallel SMTP clients send 20 KB
 * messages (multipart text + HTML, unique Message-IDs) to the bundled MTA,
 * where every message is stored (raw MIME in the fs blob store with fsync,
 * row in SQL), parsed with mailparser, scored, filed by rules and listed
 * afterwards; baseline = a bare `smtp-server` sink that only reads the DATA
 * stream, measured in the same run with the same clients.
 *
 *   npx tsx bench/postbox-smtp.ts        (about 1–2 minutes on 2 cores)
 *
 * The clients run in a child process (nodemailer, pooled connections) so
 * that their CPU is not charged to the server's event loop. Databases:
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
import { tmpdir } from 'node:os';
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

// ---- client role: sends MESSAGES messages over CONNECTIONS pooled connections, prints elapsed ms as JSON ----
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
  transport.close();
  process.stdout.write(JSON.stringify({ elapsed, failed }));
  process.exit(0);
}

if (!process.execArgv.some((flag) => flag.includes(CONDITION)) && !process.env.NODE_OPTIONS?.includes(CONDITION)) {
  const child = spawnSync(process.execPath, [...process.execArgv, `--conditions=${CONDITION}`, self], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}

/** Runs the client process against `port`; resolves with messages/s. */
async function drive(port: number, run: string): Promise<{ perSecond: number; failed: number; elapsed: number }> {
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
  const { elapsed, failed } = JSON.parse(output) as { elapsed: number; failed: number };
  return { perSecond: ((MESSAGES - failed) / elapsed) * 1000, failed, elapsed };
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
async function measureSink(): Promise<{ perSecond: number; failed: number }> {
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
  received = 0;
  const result = await drive(port, `sink-${Date.now()}`);
  await new Promise<void>((resolve) => sink.close(() => resolve()));
  if (received !== MESSAGES) throw new Error(`The sink received ${received} of ${MESSAGES} messages.`);
  return result;
}

/** The postbox on `db`: warm-up run, measured run, then every message listed and checked. */
async function measurePostbox(
  db: SqlDatabase,
): Promise<{ perSecond: number; failed: number; listed: number; listMs: number; quarantined: number }> {
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
  for (const agent of RECIPIENTS) await service.alloc({ agentId: agent, localPart: agent });
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
      const page = await service.list({ agentId: agent, direction: 'in', limit: 500, since });
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

const rows: string[] = [];
const sink = await measureSink();
rows.push(`| bare smtp-server sink (reads the stream only) | ${sink.perSecond.toFixed(0)} | 1.00 | ${sink.failed} | – |`);

const sqliteDir = await mkdtemp(join(tmpdir(), 'bench-postbox-sqlite-'));
const sqlite = createSqliteDatabase({ filename: join(sqliteDir, 'bench.db') });
const onSqlite = await measurePostbox(sqlite);
await rm(sqliteDir, { recursive: true, force: true });
rows.push(
  `| postbox on SQLite (stored, parsed, scored, listed) | ${onSqlite.perSecond.toFixed(0)} | ${(onSqlite.perSecond / sink.perSecond).toFixed(2)} | ${onSqlite.failed} | ${onSqlite.listed} in ${onSqlite.listMs.toFixed(0)} ms |`,
);

const url = process.env.AGENTINFRA_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_postbox_${randomBytes(4).toString('hex')}`;
const postgres = createPostgresDatabase({ url, schema, poolMax: 10 });
let onPostgres: Awaited<ReturnType<typeof measurePostbox>> | null = null;
try {
  await postgres.ping();
  onPostgres = await measurePostbox(postgres);
  rows.push(
    `| postbox on PostgreSQL (stored, parsed, scored, listed) | ${onPostgres.perSecond.toFixed(0)} | ${(onPostgres.perSecond / sink.perSecond).toFixed(2)} | ${onPostgres.failed} | ${onPostgres.listed} in ${onPostgres.listMs.toFixed(0)} ms |`,
  );
} catch (error) {
  rows.push(`| postbox on PostgreSQL | skipped: ${(error as Error).message.split('\n')[0]} | | | |`);
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

console.log(`## agent-postbox SMTP ingest: ${MESSAGES} messages of 20 KB, ${CONNECTIONS} pooled client connections\n`);
console.log('| server | messages/s | vs sink | failed | listed afterwards |');
console.log('|---|---:|---:|---:|---|');
for (const row of rows) console.log(row);
console.log();
console.log(
  `Ratio (target ≥ 0.50): SQLite ${(onSqlite.perSecond / sink.perSecond).toFixed(2)}${onPostgres ? `, PostgreSQL ${(onPostgres.perSecond / sink.perSecond).toFixed(2)}` : ''}.`,
);
