import { afterEach, describe, expect, it } from 'vitest';
import { JobInterruptedError, JobLeaseLostError } from '../jobs/job.js';
import { coreMigrations } from '../jobs/migrations.js';
import { JobRunner } from '../jobs/runner.js';
import { migrateLatest } from '../kernel/migrations.js';
import { createLogger } from '../logger.js';
import type { SqlDatabase } from '../ports/sql-database.js';
import { chunks } from '../sql-chunks.js';
import type { SqlDatabaseContractOptions } from './sql-database-contract.js';

const logger = createLogger({ level: 'silent' });

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type PlanNode = Record<string, unknown> & { Plans?: PlanNode[]; Plan?: PlanNode };

/** The first node of a PostgreSQL JSON plan (EXPLAIN FORMAT JSON) that `match` accepts, depth first. */
function findPlanNode(plan: unknown, match: (node: PlanNode) => boolean): PlanNode | undefined {
  const nodes = (Array.isArray(plan) ? plan : [plan]) as PlanNode[];
  for (const node of nodes) {
    if (node === null || typeof node !== 'object') continue;
    if (match(node)) return node;
    const inner = findPlanNode([...(node.Plan ? [node.Plan] : []), ...(node.Plans ?? [])], match);
    if (inner) return inner;
  }
  return undefined;
}

/**
 * The durable job runner's behaviour on one SQL adapter: exactly-once runs,
 * retries with back-off, deduplication, timeouts, lease expiry after a crash,
 * three runners sharing 1,000 jobs, recurring schedules enqueued once per
 * instant, and fairness groups capped across runners without holding back
 * other groups. Each test migrates a fresh database from `create` (the same
 * fixture factory as {@link runSqlDatabaseContract}); takes about 5 s.
 */
export function runJobRunnerContract({ name, create }: SqlDatabaseContractOptions): void {
  describe(`durable job runner on ${name}`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function setup(): Promise<SqlDatabase> {
      const fixture = await create();
      cleanups.push(fixture.cleanup);
      await migrateLatest({ knex: fixture.db.knex, table: 'core_migrations', migrations: coreMigrations });
      return fixture.db;
    }

    function runner(sql: SqlDatabase, options: Partial<ConstructorParameters<typeof JobRunner>[0]> = {}) {
      const instance = new JobRunner({
        sql,
        clock: { now: () => Date.now() },
        logger,
        pollIntervalMs: 20,
        concurrency: 4,
        groupConcurrency: 2,
        retryBaseMs: 10,
        retryMaxMs: 50,
        ...options,
      });
      cleanups.push(() => instance.stop(1_000));
      return instance;
    }

    it('runs an enqueued job once and records success', async () => {
      const sql = await setup();
      const jobs = runner(sql);
      const seen: unknown[] = [];
      jobs.register({ name: 'test.echo', run: async ({ payload }) => void seen.push(payload) }, null);
      jobs.start();
      const { id } = await jobs.enqueue({ name: 'test.echo', payload: { n: 1 } });
      await until(async () => (await jobs.get({ id }))?.status === 'succeeded');
      expect(seen).toEqual([{ n: 1 }]);
    });

    it('retries failures with back-off up to max_attempts, then fails with the error', async () => {
      const sql = await setup();
      const jobs = runner(sql);
      let calls = 0;
      jobs.register(
        {
          name: 'test.flaky',
          maxAttempts: 3,
          run: async () => {
            calls += 1;
            throw new Error(`boom ${calls}`);
          },
        },
        null,
      );
      jobs.start();
      const { id } = await jobs.enqueue({ name: 'test.flaky' });
      await until(async () => (await jobs.get({ id }))?.status === 'failed');
      const record = await jobs.get({ id });
      expect(record).toMatchObject({ attempts: 3, lastError: 'boom 3' });
      expect(calls).toBe(3);
    });

    it('succeeds after transient failures', async () => {
      const sql = await setup();
      const jobs = runner(sql);
      let calls = 0;
      jobs.register(
        {
          name: 'test.transient',
          run: async () => {
            calls += 1;
            if (calls < 3) throw new Error('not yet');
          },
        },
        null,
      );
      jobs.start();
      const { id } = await jobs.enqueue({ name: 'test.transient' });
      await until(async () => (await jobs.get({ id }))?.status === 'succeeded');
      expect((await jobs.get({ id }))?.attempts).toBe(3);
    });

    it('deduplicates by key and cancels queued jobs', async () => {
      const sql = await setup();
      const jobs = runner(sql);
      jobs.register({ name: 'test.noop', run: async () => undefined }, null);
      const first = await jobs.enqueue({ name: 'test.noop', dedupeKey: 'k1', runAt: Date.now() + 60_000 });
      const second = await jobs.enqueue({ name: 'test.noop', dedupeKey: 'k1', runAt: Date.now() + 60_000 });
      expect(second).toEqual({ id: first.id, created: false });
      expect((await jobs.get({ dedupeKey: 'k1' }))?.id).toBe(first.id);
      expect(await jobs.get({ dedupeKey: 'k2' })).toBeNull();
      expect(await jobs.cancel({ dedupeKeyPrefix: 'k' })).toBe(1);
      expect((await jobs.get({ id: first.id }))?.status).toBe('cancelled');
    });

    it('puts failed jobs back in the queue by dedupe-key prefix and runs them again with fresh attempts, in their group', async () => {
      const sql = await setup();
      const jobs = runner(sql);
      let receiverUp = false;
      const delivered: unknown[] = [];
      jobs.register(
        {
          name: 'test.delivery',
          maxAttempts: 2,
          run: async ({ payload }) => {
            if (!receiverUp) throw new Error('receiver down');
            delivered.push(payload);
          },
        },
        null,
      );
      jobs.start();
      const grouped = await jobs.enqueue({ name: 'test.delivery', payload: 'a1', dedupeKey: 'hook-a:1', group: 'agent-a' });
      const plain = await jobs.enqueue({ name: 'test.delivery', payload: 'a2', dedupeKey: 'hook-a:2' });
      const other = await jobs.enqueue({ name: 'test.delivery', payload: 'b1', dedupeKey: 'hook-b:1' });
      const all = [grouped.id, plain.id, other.id];
      await until(async () => (await Promise.all(all.map((id) => jobs.get({ id })))).every((job) => job?.status === 'failed'));
      const queuedLater = await jobs.enqueue({ name: 'test.delivery', payload: 'a3', dedupeKey: 'hook-a:3', runAt: Date.now() + 60_000 });

      receiverUp = true;
      expect(await jobs.retry({ dedupeKeyPrefix: 'hook-a:' })).toBe(2);
      await until(
        async () =>
          (await jobs.get({ id: grouped.id }))?.status === 'succeeded' && (await jobs.get({ id: plain.id }))?.status === 'succeeded',
      );
      expect(delivered.sort()).toEqual(['a1', 'a2']);
      expect(await jobs.get({ id: grouped.id })).toMatchObject({ attempts: 1, group: 'agent-a', dedupeKey: 'hook-a:1' });
      // Neither a failed job under another prefix nor a job that had not failed moved.
      expect(await jobs.get({ id: other.id })).toMatchObject({ status: 'failed', attempts: 2 });
      expect(await jobs.get({ id: queuedLater.id })).toMatchObject({ status: 'queued', attempts: 0 });
      expect(await jobs.retry({ dedupeKeyPrefix: 'hook-a:' })).toBe(0);
      expect(await jobs.retry({})).toBe(0);
      expect(await jobs.retry({ ids: [other.id] })).toBe(1);
      await until(async () => (await jobs.get({ id: other.id }))?.status === 'succeeded');
    });

    it('cancels inside a transaction: a rolled-back one leaves the job queued, a committed one cancels it', async () => {
      const sql = await setup();
      const jobs = runner(sql);
      jobs.register({ name: 'test.noop', run: async () => undefined }, null);
      const { id } = await jobs.enqueue({ name: 'test.noop', runAt: Date.now() + 60_000 });
      await expect(
        sql.knex.transaction(async (trx) => {
          expect(await jobs.cancel({ ids: [id], trx })).toBe(1);
          throw new Error('the change this cancel belonged to failed');
        }),
      ).rejects.toThrow('failed');
      expect((await jobs.get({ id }))?.status).toBe('queued');
      await sql.knex.transaction((trx) => jobs.cancel({ ids: [id], trx }));
      expect((await jobs.get({ id }))?.status).toBe('cancelled');
    });

    // Review: on PostgreSQL a claim re-reads a row a cancel committed while the claim was choosing it, and only
    // `id in (…)` was checked on the new row: cancel() answered 1 and the job ran (145 of 300 with 40,000 running rows).
    it('never claims a job whose cancel committed while the claim was choosing it', async () => {
      const sql = await setup();
      const jobs = runner(sql);
      jobs.register({ name: 'test.noop', run: async () => undefined }, null);
      const claim = (limit: number) => (jobs as unknown as { claim(limit: number): Promise<Array<{ id: string }>> }).claim(limit);
      // Jobs other workers run: the claim reads past them, which leaves a cancel time to commit meanwhile.
      const now = Date.now();
      const running = Array.from({ length: 20_000 }, (_, index) => ({
        id: `running-${index}`,
        name: 'test.noop',
        payload: 'null',
        status: 'running',
        run_at: now,
        attempts: 1,
        max_attempts: 5,
        locked_by: 'another-worker',
        locked_until: now + 3_600_000,
        created_at: now,
        updated_at: now,
      }));
      for (let start = 0; start < running.length; start += 200) await sql.knex('core_jobs').insert(running.slice(start, start + 200));
      const claimedAfterCancel: string[] = [];
      for (let round = 0; round < 40; round += 1) {
        const { id } = await jobs.enqueue({ name: 'test.noop' });
        const claiming = claim(4);
        await new Promise((resolve) => setTimeout(resolve, round % 10));
        const cancelled = await jobs.cancel({ ids: [id] });
        const claimed = (await claiming).map((row) => row.id);
        if (cancelled === 1 && claimed.includes(id)) claimedAfterCancel.push(id);
        await sql.knex('core_jobs').where({ id }).delete();
      }
      expect(claimedAfterCancel).toEqual([]);
    });

    it('aborts a job at its timeout and retries it', async () => {
      const sql = await setup();
      const jobs = runner(sql);
      let calls = 0;
      jobs.register(
        {
          name: 'test.slow',
          timeoutMs: 50,
          maxAttempts: 2,
          run: async () => {
            calls += 1;
            await new Promise((r) => setTimeout(r, 5_000));
          },
        },
        null,
      );
      jobs.start();
      const { id } = await jobs.enqueue({ name: 'test.slow' });
      await until(async () => (await jobs.get({ id }))?.status === 'failed');
      expect((await jobs.get({ id }))?.lastError).toMatch(/Timed out after 50 ms/);
      expect(calls).toBe(2);
    });

    it('hands a job interrupted by stop back to the queue, due at once and its attempt uncounted, for another runner', async () => {
      const sql = await setup();
      const stopping = runner(sql, { leaseMs: 60_000 });
      let reason: unknown;
      stopping.register(
        {
          name: 'test.once',
          maxAttempts: 1,
          run: ({ signal }) =>
            new Promise<void>((_, reject) => {
              signal.addEventListener(
                'abort',
                () => {
                  reason = signal.reason;
                  reject(reason);
                },
                { once: true },
              );
            }),
        },
        null,
      );
      stopping.start();
      const { id } = await stopping.enqueue({ name: 'test.once', group: 'tenant:A' });
      await until(async () => (await stopping.get({ id }))?.status === 'running');
      await stopping.stop(50);
      expect(reason).toBeInstanceOf(JobInterruptedError);
      expect(await stopping.get({ id })).toEqual(expect.objectContaining({ status: 'queued', attempts: 0 }));
      const next = runner(sql, { leaseMs: 60_000 });
      next.register({ name: 'test.once', maxAttempts: 1, run: async () => undefined }, null);
      next.start();
      await until(async () => (await next.get({ id }))?.status === 'succeeded', 2_000);
      expect((await next.get({ id }))?.attempts).toBe(1);
    });

    it('records a job that finished its work just after the stop interrupted it as succeeded, not to be run again', async () => {
      const sql = await setup();
      const stopping = runner(sql);
      let runs = 0;
      // Like a delivery whose answer arrives as the shutdown aborts it: the handler completes anyway.
      stopping.register(
        {
          name: 'test.late',
          run: ({ signal }) =>
            new Promise<void>((resolve) => {
              runs += 1;
              signal.addEventListener('abort', () => setTimeout(resolve, 50), { once: true });
            }),
        },
        null,
      );
      stopping.start();
      const { id } = await stopping.enqueue({ name: 'test.late' });
      await until(async () => (await stopping.get({ id }))?.status === 'running');
      await stopping.stop(20);
      expect(await stopping.get({ id })).toEqual(expect.objectContaining({ status: 'succeeded', attempts: 1 }));
      expect(runs).toBe(1);
    });

    it('leaves a job still running after the stop to its lease, so that no other runner starts it meanwhile', async () => {
      const sql = await setup();
      const spans: Array<{ start: number; end?: number }> = [];
      // Like outbound mail: the handler does not listen to the signal and takes longer than the stop waits.
      const stubborn = async () => {
        const span: { start: number; end?: number } = { start: Date.now() };
        spans.push(span);
        await new Promise((resolve) => setTimeout(resolve, spans.length === 1 ? 1_300 : 0));
        span.end = Date.now();
      };
      const stopping = runner(sql, { leaseMs: 1_500 });
      stopping.register({ name: 'test.stubborn', run: stubborn }, null);
      stopping.start();
      const { id } = await stopping.enqueue({ name: 'test.stubborn' });
      await until(async () => (await stopping.get({ id }))?.status === 'running');
      await stopping.stop(20);
      expect((await stopping.get({ id }))?.status).toBe('running');
      const next = runner(sql, { leaseMs: 1_500 });
      next.register({ name: 'test.stubborn', run: stubborn }, null);
      next.start();
      await until(async () => (await next.get({ id }))?.status === 'succeeded', 8_000);
      expect(spans).toHaveLength(2);
      expect(spans[1]!.start).toBeGreaterThanOrEqual(spans[0]!.end!);
    });

    it('survives a database error while it records an attempt: logs it, and the job is retried after its lease', async () => {
      const sql = await setup();
      const jobs = runner(sql, { leaseMs: 300 });
      let calls = 0;
      jobs.register(
        {
          name: 'test.outage',
          run: async () => {
            calls += 1;
            if (calls > 1) return;
            // The database goes away while the attempt runs: its outcome cannot be written.
            await sql.knex.schema.renameTable('core_jobs', 'core_jobs_away');
            throw new Error('the receiver failed');
          },
        },
        null,
      );
      jobs.start();
      const { id } = await jobs.enqueue({ name: 'test.outage' });
      await until(async () => (await sql.knex.schema.hasTable('core_jobs_away')) && calls === 1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await sql.knex.schema.renameTable('core_jobs_away', 'core_jobs');
      await until(async () => (await jobs.get({ id }))?.status === 'succeeded', 5_000);
      expect(calls).toBe(2);
    });

    // Review: a renewal that matched no row went unnoticed, so two workers ran the job side by side.
    it('stops an attempt whose lease another worker took over, and leaves the job to that worker', async () => {
      const sql = await setup();
      const jobs = runner(sql, { leaseMs: 300 });
      let reason: unknown;
      jobs.register(
        {
          name: 'test.overtaken',
          run: ({ signal }) =>
            new Promise<void>((_, reject) =>
              signal.addEventListener('abort', () => {
                reason = signal.reason;
                reject(signal.reason);
              }),
            ),
        },
        null,
      );
      jobs.start();
      const { id } = await jobs.enqueue({ name: 'test.overtaken' });
      await until(async () => (await jobs.get({ id }))?.status === 'running');
      // What a claim by another process after this lease expired leaves: the job running under that worker.
      const overtaken = { locked_by: 'another-worker', locked_until: Date.now() + 60_000, attempts: 2 };
      await sql.knex('core_jobs').where({ id }).update(overtaken);
      await until(async () => reason !== undefined, 5_000);
      expect(reason).toBeInstanceOf(JobLeaseLostError);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await sql.knex('core_jobs').where({ id }).first()).toMatchObject({ status: 'running', ...overtaken });
    });

    it('picks up a job whose lease expired (its process died)', async () => {
      const sql = await setup();
      const dead = runner(sql, { leaseMs: 100 });
      dead.register({ name: 'test.lease', run: () => new Promise(() => undefined) }, null);
      const { id } = await dead.enqueue({ name: 'test.lease' });
      await sql
        .knex('core_jobs')
        .where({ id })
        .update({ status: 'running', locked_by: 'ghost', locked_until: Date.now() - 1, attempts: 1 });
      const alive = runner(sql, { leaseMs: 100 });
      let ran = 0;
      alive.register(
        {
          name: 'test.lease',
          run: async () => {
            ran += 1;
          },
        },
        null,
      );
      alive.start();
      await until(async () => (await alive.get({ id }))?.status === 'succeeded');
      expect(ran).toBe(1);
      expect((await alive.get({ id }))?.attempts).toBe(2);
    });

    it('three runners (replicas) on one database run each of 1,000 jobs exactly once (issue #3)', async () => {
      const sql = await setup();
      const counts = new Map<number, number>();
      const runners = [runner(sql), runner(sql), runner(sql)];
      for (const jobs of runners) {
        jobs.register(
          { name: 'test.count', run: async ({ payload }) => void counts.set(payload as number, (counts.get(payload as number) ?? 0) + 1) },
          null,
        );
      }
      for (let i = 0; i < 1_000; i += 1) await runners[i % 3]!.enqueue({ name: 'test.count', payload: i, runAt: Date.now() + 500 });
      for (const jobs of runners) jobs.start();
      await until(async () => counts.size === 1_000, 30_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect([...counts.values()].every((count) => count === 1)).toBe(true);
    });

    /** Registers `test.hang`: each run records its group and waits until it is aborted. */
    function registerHanging(jobs: JobRunner, started: string[]): void {
      jobs.register(
        {
          name: 'test.hang',
          timeoutMs: 20_000,
          run: ({ payload, signal }) =>
            new Promise<void>((resolve) => {
              started.push(payload as string);
              signal.addEventListener('abort', () => resolve(), { once: true });
            }),
        },
        null,
      );
    }

    it("starts another group's job at once while a group of hanging jobs fills its cap", async () => {
      const sql = await setup();
      const jobs = runner(sql);
      const started: string[] = [];
      registerHanging(jobs, started);
      jobs.register({ name: 'test.quick', run: async () => undefined }, null);
      const past = Date.now() - 1_000;
      for (let i = 0; i < 12; i += 1) await jobs.enqueue({ name: 'test.hang', payload: 'A', group: 'tenant:A', runAt: past + i });
      jobs.start();
      await until(async () => started.length === 2);
      const began = Date.now();
      const other = await jobs.enqueue({ name: 'test.quick', group: 'tenant:B' });
      const plain = await jobs.enqueue({ name: 'test.quick' });
      await until(async () => (await jobs.get({ id: other.id }))?.status === 'succeeded', 2_000);
      await until(async () => (await jobs.get({ id: plain.id }))?.status === 'succeeded', 2_000);
      expect(Date.now() - began).toBeLessThan(2_000);
      expect(started).toEqual(['A', 'A']);
      const running = await sql.knex('core_jobs').where({ job_group: 'tenant:A', status: 'running' }).select('id');
      expect(running).toHaveLength(2);
      expect((await jobs.get({ id: other.id }))?.group).toBe('tenant:B');
      expect((await jobs.get({ id: plain.id }))?.group).toBeNull();
    });

    /** Inserts `count` due jobs of `group` (oldest first) in bulk, as a backlog the claim must not read. */
    async function backlog(sql: SqlDatabase, name: string, group: string, count: number): Promise<void> {
      const now = Date.now();
      const rows = Array.from({ length: count }, (_, i) => ({
        id: `jb_backlog_${String(i).padStart(6, '0')}`,
        name,
        payload: JSON.stringify(group),
        status: 'queued',
        run_at: now - 60_000 + i,
        attempts: 0,
        max_attempts: 5,
        job_group: group,
        created_at: now,
        updated_at: now,
      }));
      for (const slice of chunks(rows, 200)) await sql.knex('core_jobs').insert(slice);
    }

    it("claims another group's job at once behind a saturated group's backlog of 2,000 due jobs", async () => {
      const sql = await setup();
      const jobs = runner(sql);
      const started: string[] = [];
      registerHanging(jobs, started);
      jobs.register({ name: 'test.quick', run: async () => undefined }, null);
      await backlog(sql, 'test.hang', 'tenant:A', 2_000);
      jobs.start();
      await until(async () => started.length === 2);
      const began = Date.now();
      const other = await jobs.enqueue({ name: 'test.quick', group: 'tenant:B' });
      const plain = await jobs.enqueue({ name: 'test.quick' });
      await until(async () => (await jobs.get({ id: other.id }))?.status === 'succeeded', 2_000);
      await until(async () => (await jobs.get({ id: plain.id }))?.status === 'succeeded', 2_000);
      expect(Date.now() - began).toBeLessThan(2_000);
      expect(started).toEqual(['tenant:A', 'tenant:A']);
      const [queued] = await sql.knex('core_jobs').where({ job_group: 'tenant:A', status: 'queued' }).count({ n: '*' });
      expect(Number(queued?.n)).toBe(1_998);
    });

    it("reads a saturated group's backlog through the claim indexes, not row by row", async () => {
      const sql = await setup();
      const jobs = runner(sql);
      registerHanging(jobs, []);
      await backlog(sql, 'test.hang', 'tenant:A', 2_000);
      // White-box: the claim's candidate query (private), explained by the database.
      const eligible = (jobs as unknown as { eligible(now: number, limit: number): { sql: string; bindings: unknown[] } }).eligible(
        Date.now(),
        4,
      );
      const explain = sql.dialect === 'sqlite' ? 'explain query plan' : 'explain';
      const result = await sql.knex.raw(`${explain} ${eligible.sql}`, eligible.bindings as never);
      const plan = (
        sql.dialect === 'sqlite'
          ? (result as Array<{ detail: string }>).map((row) => row.detail)
          : (result as { rows: Array<Record<string, string>> }).rows.map((row) => Object.values(row)[0])
      ).join('\n');
      expect(plan).toContain('core_jobs_ready_group_index');
      expect(plan).toContain('core_jobs_queued_ungrouped_index');
      // The statement before it, which marks newly due grouped jobs ready, reads only the waiting ones.
      const marking = (jobs as unknown as { readyMarking(now: number): { sql: string; bindings: unknown[] } }).readyMarking(Date.now());
      const markingPlan = await sql.knex.raw(`${explain} ${marking.sql}`, marking.bindings as never);
      expect(
        (sql.dialect === 'sqlite'
          ? (markingPlan as Array<{ detail: string }>).map((row) => row.detail)
          : (markingPlan as { rows: Array<Record<string, string>> }).rows.map((row) => Object.values(row)[0])
        ).join('\n'),
      ).toContain('core_jobs_waiting_group_index');
    });

    it('runs grouped jobs scheduled for later once they are due, and grouped retries after their back-off', async () => {
      const sql = await setup();
      const jobs = runner(sql);
      const ran: string[] = [];
      let failures = 0;
      jobs.register({ name: 'test.later', run: async ({ payload }) => void ran.push(payload as string) }, null);
      jobs.register(
        {
          name: 'test.flaky',
          maxAttempts: 3,
          run: async () => {
            failures += 1;
            if (failures < 3) throw new Error('not yet');
          },
        },
        null,
      );
      jobs.start();
      const later = await jobs.enqueue({ name: 'test.later', payload: 'later', group: 'tenant:A', runAt: Date.now() + 300 });
      const flaky = await jobs.enqueue({ name: 'test.flaky', group: 'tenant:A' });
      await until(async () => (await jobs.get({ id: flaky.id }))?.status === 'succeeded');
      await until(async () => (await jobs.get({ id: later.id }))?.status === 'succeeded');
      expect(ran).toEqual(['later']);
      expect(failures).toBe(3);
    });

    it('walks only the groups with due jobs: 2,000 groups whose jobs lie in the future add nothing to a claim', async () => {
      const sql = await setup();
      const jobs = runner(sql);
      jobs.register({ name: 'test.quick', run: async () => undefined }, null);
      // Like the scheduler: one group per agent, each holding its job's next fire.
      const now = Date.now();
      const future = Array.from({ length: 2_000 }, (_, i) => ({
        id: `jb_future_${String(i).padStart(6, '0')}`,
        name: 'test.quick',
        payload: 'null',
        status: 'queued',
        run_at: now + 3_600_000 + i,
        attempts: 0,
        max_attempts: 5,
        job_group: `tenant:${String(i).padStart(6, '0')}`,
        created_at: now,
        updated_at: now,
      }));
      for (const slice of chunks(future, 200)) await sql.knex('core_jobs').insert(slice);
      const due = await jobs.enqueue({ name: 'test.quick', group: 'tenant:000500' });
      jobs.start();
      await until(async () => (await jobs.get({ id: due.id }))?.status === 'succeeded');
      const [ready] = await sql.knex('core_jobs').where({ status: 'queued', group_ready: 1 }).count({ n: '*' });
      expect(Number(ready?.n)).toBe(0);
      if (sql.dialect === 'postgres') {
        // The loose index scan's own row count, as PostgreSQL executed it: the one group with a due job, and the end.
        const again = await jobs.enqueue({ name: 'test.quick', group: 'tenant:001500' });
        await sql.knex('core_jobs').where({ id: again.id }).update({ group_ready: 1 });
        const eligible = (jobs as unknown as { eligible(now: number, limit: number): { sql: string; bindings: unknown[] } }).eligible(
          Date.now(),
          4,
        );
        const result = (await sql.knex.raw(`explain (analyze, format json) ${eligible.sql}`, eligible.bindings as never)) as {
          rows: Array<{ 'QUERY PLAN': unknown }>;
        };
        const walk = findPlanNode(result.rows[0]?.['QUERY PLAN'], (node) => node['Subplan Name'] === 'CTE walk');
        expect(walk?.['Actual Rows']).toBeLessThanOrEqual(2);
      }
    });

    it('caps a group across three runners sharing the database, and runs the other groups beside it', async () => {
      const sql = await setup();
      const runners = [runner(sql), runner(sql), runner(sql)];
      const live = new Map<string, number>();
      const peak = new Map<string, number>();
      const done: string[] = [];
      for (const jobs of runners) {
        jobs.register(
          {
            name: 'test.work',
            run: async ({ payload }) => {
              const group = payload as string;
              live.set(group, (live.get(group) ?? 0) + 1);
              peak.set(group, Math.max(peak.get(group) ?? 0, live.get(group) ?? 0));
              await new Promise((resolve) => setTimeout(resolve, 100));
              live.set(group, (live.get(group) ?? 1) - 1);
              done.push(group);
            },
          },
          null,
        );
      }
      const at = Date.now() + 300;
      for (let i = 0; i < 30; i += 1) await runners[0]!.enqueue({ name: 'test.work', payload: 'A', group: 'tenant:A', runAt: at });
      for (let i = 0; i < 6; i += 1) await runners[1]!.enqueue({ name: 'test.work', payload: 'B', group: 'tenant:B', runAt: at });
      for (let i = 0; i < 6; i += 1) await runners[2]!.enqueue({ name: 'test.work', payload: 'none', runAt: at });
      for (const jobs of runners) jobs.start();
      await until(async () => done.length === 42, 20_000);
      expect(peak.get('A')).toBe(2);
      expect(peak.get('B')).toBe(2);
      expect(peak.get('none')).toBeGreaterThan(2);
    });

    it('never caps jobs without a group', async () => {
      const sql = await setup();
      const jobs = runner(sql, { groupConcurrency: 1 });
      const started: string[] = [];
      registerHanging(jobs, started);
      for (let i = 0; i < 4; i += 1) await jobs.enqueue({ name: 'test.hang', payload: 'none' });
      jobs.start();
      await until(async () => started.length === 4);
      await expect(jobs.enqueue({ name: 'test.hang', group: 'g'.repeat(256) })).rejects.toThrow(/1 to 255 characters/);
    });

    it('enqueues each occurrence of a schedule once across runners', async () => {
      const sql = await setup();
      const fired: number[] = [];
      const runners = [runner(sql), runner(sql)];
      for (const jobs of runners) {
        jobs.register(
          { name: 'test.tick', schedule: { every: 200 }, run: async ({ scheduledFor }) => void fired.push(scheduledFor!) },
          null,
        );
        jobs.start();
      }
      await until(async () => fired.length >= 3, 5_000);
      expect(new Set(fired).size).toBe(fired.length);
      expect(fired.every((instant) => instant % 200 === 0)).toBe(true);
    });
  });
}
