/**
 * Job claims beside many fairness groups whose jobs all lie in the future:
 * the scheduler keeps each job's next fire queued in its agent's group, so a
 * deployment with N agents holding scheduled jobs has N such groups, and
 * every poll (each 250 ms per replica, and after each finished job) claims.
 *
 *   npx tsx bench/jobs-claim.ts     (PostgreSQL from AGENTINFRA_TEST_DATABASE_URL,
 *                                    default postgres://postgres@127.0.0.1:5432/test; about 1 minute)
 *
 * For each engine (a SQLite file; a fresh PostgreSQL schema `b_<random>`,
 * dropped at the end) and each count of future groups, the table holds that
 * many grouped jobs due in an hour, each in its own group, plus 8 due jobs
 * (4 grouped, 4 not) that every claim finds and that are put back afterwards.
 * Rows: claim p50 / p99 over 40 claims of up to 8 jobs. "vs baseline" = p50 ÷
 * the p50 of the same engine with no future groups (the baseline), measured
 * in the same run: 1.0× means future groups cost a claim nothing.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPostgresDatabase } from '../packages/adapter-postgres/src/index.js';
import { createSqliteDatabase } from '../packages/adapter-sqlite/src/index.js';
import { createLogger, JobRunner, type SqlDatabase } from '../packages/core/src/index.js';
import { coreMigrations } from '../packages/core/src/jobs/migrations.js';
import { migrateLatest } from '../packages/core/src/kernel/migrations.js';
import { percentiles } from './support/latency-percentiles.js';

const GROUP_COUNTS = [0, 1_000, 10_000, 50_000];
const CLAIMS = 40;
const databaseUrl = process.env.AGENTINFRA_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Row {
  engine: string;
  groups: number;
  p50: number;
  p99: number;
}

/** Inserts `count` grouped jobs due in an hour, one group each, 500 rows per statement. */
async function insertFutureGroups(sql: SqlDatabase, from: number, count: number): Promise<void> {
  const now = Date.now();
  for (let start = from; start < from + count; start += 500) {
    const rows = Array.from({ length: Math.min(500, from + count - start) }, (_, i) => ({
      id: `jb_future_${String(start + i).padStart(7, '0')}`,
      name: 'bench.work',
      payload: 'null',
      status: 'queued',
      run_at: now + 3_600_000 + start + i,
      attempts: 0,
      max_attempts: 5,
      job_group: `scheduler.run:agent-${String(start + i).padStart(7, '0')}`,
      created_at: now,
      updated_at: now,
    }));
    await sql.knex('core_jobs').insert(rows);
  }
}

/** Claims up to 8 due jobs `CLAIMS` times, putting them back after each; returns the claim times (ms). */
async function measureClaims(sql: SqlDatabase, runner: JobRunner): Promise<number[]> {
  const claim = (runner as unknown as { claim(limit: number): Promise<Array<{ id: string }>> }).claim.bind(runner);
  const times: number[] = [];
  for (let i = 0; i < CLAIMS; i++) {
    const started = performance.now();
    const claimed = await claim(8);
    times.push(performance.now() - started);
    if (claimed.length !== 8) throw new Error(`a claim took ${claimed.length} jobs, expected 8`);
    await sql
      .knex('core_jobs')
      .whereIn(
        'id',
        claimed.map((job) => job.id),
      )
      .update({ status: 'queued', locked_by: null, locked_until: null, attempts: 0 });
  }
  return times;
}

async function benchEngine(engine: string, open: () => Promise<{ sql: SqlDatabase; close: () => Promise<void> }>, rows: Row[]) {
  const { sql, close } = await open();
  try {
    await migrateLatest({ knex: sql.knex, table: 'core_migrations', migrations: coreMigrations });
    const runner = new JobRunner({
      sql,
      clock: { now: () => Date.now() },
      logger: createLogger({ level: 'silent' }),
      pollIntervalMs: 60_000,
      concurrency: 8,
      groupConcurrency: 2,
      retryBaseMs: 1_000,
      retryMaxMs: 60_000,
    });
    runner.register({ name: 'bench.work', run: async () => undefined }, null);
    for (let i = 0; i < 4; i++) {
      await runner.enqueue({ name: 'bench.work', group: `tenant-${i}` });
      await runner.enqueue({ name: 'bench.work' });
    }
    let inserted = 0;
    for (const groups of GROUP_COUNTS) {
      await insertFutureGroups(sql, inserted, groups - inserted);
      inserted = groups;
      if (sql.dialect === 'postgres') await sql.knex.raw('analyze core_jobs');
      const { p50, p99 } = percentiles(await measureClaims(sql, runner));
      rows.push({ engine, groups, p50, p99 });
    }
  } finally {
    await close();
  }
}

const rows: Row[] = [];
const folder = mkdtempSync(join(tmpdir(), 'agentinfra-jobs-claim-'));
try {
  await benchEngine(
    'SQLite',
    async () => {
      const sql = await createSqliteDatabase({ filename: join(folder, 'jobs.db') });
      return { sql, close: () => sql.close() };
    },
    rows,
  );
} finally {
  rmSync(folder, { recursive: true, force: true });
}
const schema = `b_${randomBytes(6).toString('hex')}`;
try {
  await benchEngine(
    'PostgreSQL',
    async () => {
      const sql = await createPostgresDatabase({ url: databaseUrl, schema });
      return {
        sql,
        close: async () => {
          await sql.knex.raw(`drop schema if exists ${schema} cascade`);
          await sql.close();
        },
      };
    },
    rows,
  );
} catch (error) {
  process.stderr.write(`[agentinfra] jobs-claim: PostgreSQL skipped: ${(error as Error).message.split('\n')[0]}\n`);
}

console.log('| engine | future groups | claim p50 ms | claim p99 ms | p50 vs baseline |');
console.log('|---|---:|---:|---:|---:|');
for (const row of rows) {
  const baseline = rows.find((other) => other.engine === row.engine && other.groups === 0)?.p50 ?? Number.NaN;
  console.log(
    `| ${row.engine} | ${row.groups.toLocaleString('en-US')}${row.groups === 0 ? ' (baseline)' : ''} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${(row.p50 / baseline).toFixed(2)}× |`,
  );
}
