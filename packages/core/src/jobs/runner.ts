import { hostname } from 'node:os';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { newId } from '../credentials.js';
import type { Clock } from '../ports/clock.js';
import type { SqlDatabase } from '../ports/sql-database.js';
import {
  type EnqueueOptions,
  type JobDefinition,
  JobInterruptedError,
  JobLeaseLostError,
  type JobQueue,
  type JobRecord,
  type JobSelection,
  type JobStatus,
  MAX_GROUP_LENGTH,
} from './job.js';
import { nextOccurrence } from './schedule.js';

/** Tuning of {@link JobRunner}. */
export interface JobRunnerOptions {
  sql: SqlDatabase;
  clock: Clock;
  logger: Logger;
  /** Idle poll interval, ms. */
  pollIntervalMs: number;
  /** Jobs run at once by this process. */
  concurrency: number;
  /**
   * Jobs of one fairness group ({@link EnqueueOptions.group}) running at once
   * across every worker sharing the database (at least 1).
   */
  groupConcurrency: number;
  /** First retry delay ceiling, ms (doubles per attempt; equal jitter: a delay between half and all of it). */
  retryBaseMs: number;
  /** Longest retry delay, ms. */
  retryMaxMs: number;
  /** Lease length, ms: a claimed job whose lease is not renewed (crashed process) is claimed again after it. */
  leaseMs?: number;
  /** Told about claims and failures (the kernel's metrics). */
  observer?: JobObserver;
}

/** What the runner reports as it works (for metrics). */
export interface JobObserver {
  /** A worker claimed a job `latenessMs` after it fell due. */
  claimed(name: string, latenessMs: number): void;
  /** An attempt failed; `final` when no attempt remains. */
  failed(name: string, final: boolean): void;
}

interface Registered {
  definition: JobDefinition<unknown>;
  service: unknown;
}

interface JobRow {
  id: string;
  name: string;
  payload: string;
  status: JobStatus;
  run_at: number;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  dedupe_key: string | null;
  job_group: string | null;
  scheduled_for: number | null;
}

const TABLE = 'core_jobs';
/** One-row table (`name` = `claim`) whose row lock serializes claims where several processes share the database. */
const LOCK_TABLE = 'core_job_locks';
const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_ATTEMPTS = 5;
const ERROR_LIMIT = 2_000;
/** How long (ms) an interrupted job's handler may take to settle before the job is handed back. */
const INTERRUPT_SETTLE_MS = 1_000;

function toRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    runAt: row.run_at,
    lastError: row.last_error,
    dedupeKey: row.dedupe_key,
    group: row.job_group,
  };
}

/**
 * The durable job runner (pg-boss / graphile-worker style): jobs are rows in
 * `core_jobs`; a worker claims due rows by moving them to `running` with a
 * lease (`FOR UPDATE SKIP LOCKED` where the database has it, SQLite's single
 * writer otherwise), renews the lease while the job runs, and records the
 * outcome. Failed attempts are retried with exponential back-off and full
 * jitter until `max_attempts`. Recurring jobs enqueue each occurrence with a
 * unique dedupe key, so an instant fires once however many replicas run.
 *
 * Fairness groups (BullMQ's group concurrency): a claim skips the due jobs
 * of a group that already has `groupConcurrency` jobs running (counted in
 * SQL, so across replicas) and takes the other groups' due jobs in the same
 * claim. Claims on a database shared by several processes are serialized by
 * a row lock held for the claim's transaction, so two replicas never both
 * fill a group's last slot; enqueues, lease renewals and outcomes never wait
 * for it.
 *
 * Every write of an attempt (renewal, outcome) is fenced by its attempt
 * number as well as the worker id, so an attempt whose lease expired never
 * overwrites the later attempt that claimed the job, even in the same worker.
 */
export class JobRunner implements JobQueue {
  private readonly options: Required<Omit<JobRunnerOptions, 'observer'>> & Pick<JobRunnerOptions, 'observer'>;
  private readonly handlers = new Map<string, Registered>();
  private readonly workerId = `${hostname().slice(0, 24)}:${process.pid}:${newId('').slice(0, 8)}`;
  /** Running attempts by `<job id>#<attempt>`: after an expired lease this worker may run a later attempt of one job beside a stale one. */
  private readonly inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly ensured = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private polling: Promise<void> | null = null;
  private pollAgain = false;

  constructor(options: JobRunnerOptions) {
    this.options = { leaseMs: 30_000, ...options };
  }

  /** Registers a job kind and the service its `run` receives. @throws Error on a duplicate name or invalid schedule. */
  register(definition: JobDefinition<unknown>, service: unknown): void {
    if (this.handlers.has(definition.name)) throw new Error(`Job "${definition.name}" is registered twice.`);
    if (definition.schedule) nextOccurrence(definition.schedule, this.options.clock.now());
    this.handlers.set(definition.name, { definition, service });
  }

  async enqueue(options: EnqueueOptions): Promise<{ id: string; created: boolean }> {
    const now = this.options.clock.now();
    const definition = this.handlers.get(options.name)?.definition;
    if (options.group !== undefined && (options.group.length === 0 || options.group.length > MAX_GROUP_LENGTH)) {
      throw new Error(`A job group must have 1 to ${MAX_GROUP_LENGTH} characters.`);
    }
    const db = options.trx ?? this.options.sql.knex;
    const id = newId('jb_');
    const inserted = await db(TABLE)
      .insert({
        id,
        name: options.name,
        payload: JSON.stringify(options.payload ?? null),
        status: 'queued',
        run_at: options.runAt ?? now,
        attempts: 0,
        max_attempts: options.maxAttempts ?? definition?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        dedupe_key: options.dedupeKey ?? null,
        job_group: options.group ?? null,
        group_ready: options.group !== undefined && (options.runAt ?? now) <= now ? 1 : 0,
        scheduled_for: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict('dedupe_key')
      .ignore()
      .returning('id');
    if (inserted.length > 0) {
      if ((options.runAt ?? now) <= now && !options.trx) this.wake();
      return { id, created: true };
    }
    const existing = await db(TABLE).select('id').where({ dedupe_key: options.dedupeKey }).first();
    return { id: existing.id as string, created: false };
  }

  async cancel(options: JobSelection): Promise<number> {
    const now = this.options.clock.now();
    return this.selected('queued', options)?.update({ status: 'cancelled', finished_at: now, updated_at: now }) ?? 0;
  }

  async retry(options: JobSelection): Promise<number> {
    const now = this.options.clock.now();
    const updated =
      (await this.selected('failed', options)?.update({
        status: 'queued',
        attempts: 0,
        run_at: now,
        group_ready: this.options.sql.knex.raw('case when job_group is null then 0 else 1 end'),
        finished_at: null,
        updated_at: now,
      })) ?? 0;
    if (updated > 0 && !options.trx) this.wake();
    return updated;
  }

  /** The jobs in `status` that `options` names (by id, dedupe-key prefix or both), or null when it names none. */
  private selected(status: JobStatus, options: JobSelection): Knex.QueryBuilder | null {
    if (!options.ids && options.dedupeKeyPrefix === undefined) return null;
    const query = (options.trx ?? this.options.sql.knex)(TABLE).where({ status });
    if (options.ids) query.whereIn('id', [...options.ids]);
    if (options.dedupeKeyPrefix !== undefined) {
      const prefix = options.dedupeKeyPrefix;
      query.where(this.options.sql.knex.raw('substr(dedupe_key, 1, ?) = ?', [prefix.length, prefix]));
    }
    return query;
  }

  async get(options: { id: string } | { dedupeKey: string }): Promise<JobRecord | null> {
    const where = 'id' in options ? { id: options.id } : { dedupe_key: options.dedupeKey };
    const row = (await this.options.sql.knex(TABLE).where(where).first()) as JobRow | undefined;
    return row ? toRecord(row) : null;
  }

  /** Starts polling. Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedulePoll(0);
  }

  /**
   * Stops claiming new jobs, waits up to `graceMs` for running ones, then
   * aborts what is left (their leases expire and another process retries them).
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
    const pending = [...this.inFlight.values()].map((job) => job.done);
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.all(pending), timeout]);
    for (const job of this.inFlight.values()) job.controller.abort(new JobInterruptedError());
    await Promise.all([...this.inFlight.values()].map((job) => job.done));
  }

  private wake(): void {
    if (!this.running) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.schedulePoll(0);
  }

  private schedulePoll(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (!this.running || this.polling) return;
    let claimed = 0;
    this.polling = (async () => {
      try {
        await this.ensureScheduled();
        claimed = await this.claimAndRun();
      } catch (error) {
        this.options.logger.error({ err: error }, 'job runner poll failed');
      }
    })();
    await this.polling;
    this.polling = null;
    if (!this.running) return;
    const again = this.pollAgain || (claimed > 0 && this.inFlight.size < this.options.concurrency);
    this.pollAgain = false;
    this.schedulePoll(again ? 0 : this.options.pollIntervalMs);
  }

  private async ensureScheduled(): Promise<void> {
    const now = this.options.clock.now();
    for (const { definition } of this.handlers.values()) {
      if (!definition.schedule) continue;
      const next = nextOccurrence(definition.schedule, now);
      if (this.ensured.get(definition.name) === next) continue;
      const dedupeKey = `schedule:${definition.name}@${new Date(next).toISOString()}`;
      await this.options.sql
        .knex(TABLE)
        .insert({
          id: newId('jb_'),
          name: definition.name,
          payload: 'null',
          status: 'queued',
          run_at: next,
          attempts: 0,
          max_attempts: definition.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
          dedupe_key: dedupeKey,
          scheduled_for: next,
          created_at: now,
          updated_at: now,
        })
        .onConflict('dedupe_key')
        .ignore();
      this.ensured.set(definition.name, next);
    }
  }

  private async claimAndRun(): Promise<number> {
    const capacity = this.options.concurrency - this.inFlight.size;
    if (capacity <= 0 || this.handlers.size === 0) return 0;
    const rows = await this.claim(capacity);
    const now = this.options.clock.now();
    for (const row of rows) {
      this.options.observer?.claimed(row.name, Math.max(0, now - Number(row.run_at)));
      this.execute(row);
    }
    return rows.length;
  }

  /**
   * Moves up to `limit` due jobs to `running` under this worker's lease.
   * Where several processes share the database the claim runs in a
   * transaction that first locks the `claim` row of {@link LOCK_TABLE}, so
   * each claim counts the running jobs of every group after the previous
   * claim committed; on SQLite the claim is one statement of its single writer.
   * @returns the claimed rows (attempts already incremented).
   */
  private async claim(limit: number): Promise<JobRow[]> {
    const { knex, capabilities } = this.options.sql;
    if (!capabilities.multiProcess) return this.claimDue(knex, limit);
    return knex.transaction(async (trx) => {
      await trx(LOCK_TABLE).where({ name: 'claim' }).forUpdate();
      return this.claimDue(trx, limit);
    });
  }

  /**
   * Marks the grouped jobs that became due as ready, then one claim statement
   * moves the {@link eligible} jobs to `running` under this worker's lease,
   * skipping rows another transaction holds where the database can.
   */
  private async claimDue(db: Knex, limit: number): Promise<JobRow[]> {
    const now = this.options.clock.now();
    // Grouped jobs that became due join the ready groups the claim walks (literals: the partial index's predicate;
    // SQLite, without statistics, would read every due queued row through the (status, run_at) index instead).
    const marking = this.readyMarking(now);
    await db.raw(marking.sql, marking.bindings);
    const eligible = this.eligible(now, limit);
    // Claimable: due and queued, or running on an expired lease. Stated on the locked rows themselves, so that
    // PostgreSQL, which re-reads a row another transaction changed while this claim waited for it, skips a job
    // cancelled or finished meanwhile (`id in (…)` alone still matched the new row: a cancelled job ran anyway).
    const claimable = (rows: Knex.QueryBuilder) =>
      rows.where((due) =>
        due
          .where((queued) => queued.where('status', 'queued').andWhere('run_at', '<=', now))
          .orWhere((expired) => expired.where('status', 'running').andWhere('locked_until', '<', now)),
      );
    const picked = claimable(
      db(TABLE)
        .select('id')
        .whereRaw(`id in (${eligible.sql})`, eligible.bindings as Knex.RawBinding[]),
    )
      .orderBy(['run_at', 'id'])
      .limit(limit);
    if (this.options.sql.capabilities.skipLocked) picked.forUpdate().skipLocked();
    return (await claimable(db(TABLE).whereIn('id', picked))
      .update({
        status: 'running',
        locked_by: this.workerId,
        locked_until: now + this.options.leaseMs,
        attempts: db.raw('attempts + 1'),
        updated_at: now,
      })
      .returning('*')) as JobRow[];
  }

  /** The statement that marks grouped jobs due at `now` (ms) as ready, through the index of the waiting ones by `run_at`. */
  private readyMarking(now: number): { sql: string; bindings: Knex.RawBinding[] } {
    const byRunAt = this.options.sql.dialect === 'sqlite' ? ' indexed by core_jobs_waiting_group_index' : '';
    return {
      sql: `update ${TABLE}${byRunAt} set group_ready = 1 where status = 'queued' and job_group is not null and group_ready = 0 and run_at <= ?`,
      bindings: [now],
    };
  }

  /**
   * Subquery of the ids of up to `limit` ungrouped and up to `limit` grouped
   * jobs this worker may claim at `now` (ms). Candidates are its due jobs:
   * queued with `run_at` passed, or running with an expired lease. Ungrouped
   * candidates are the oldest, as they always were; a grouped candidate is
   * eligible when its rank in its group (by `run_at`, then id) plus the
   * group's jobs running under a live lease is at most `groupConcurrency`.
   * Filtering before the limit means groups at their cap never hold back the
   * others.
   *
   * The cost grows neither with any group's backlog nor with the groups
   * whose jobs are all in the future (migrations `core_jobs_claim_indexes`,
   * `core_jobs_ready_groups`): `occupied` counts the running rows; `walk` is
   * a loose index scan over the distinct groups with ready (due) queued jobs
   * (one index probe per group, in group-name order); `heads` reads, for each
   * group below its cap, only its first `cap - running` due queued rows
   * through the same index; expired leases come from the few running rows.
   * Only those few candidates are ranked. So a claim costs a few index probes
   * per distinct group with due jobs (every such group is visited, so the
   * order is exact: the oldest eligible jobs win), plus the queued rows of
   * unregistered job names it steps over. Status, null and ready tests are
   * literals so that both engines match the partial indexes.
   */
  private eligible(now: number, limit: number): { sql: string; bindings: unknown[] } {
    const names = [...this.handlers.keys()];
    const cap = this.options.groupConcurrency;
    const inNames = `(${names.map(() => '?').join(', ')})`;
    // SQLite plans without statistics (nothing runs ANALYZE) and would read the
    // queued rows through the (status, run_at) index; name the partial indexes.
    const sqlite = this.options.sql.dialect === 'sqlite';
    const byGroup = sqlite ? ' indexed by core_jobs_ready_group_index' : '';
    const byAge = sqlite ? ' indexed by core_jobs_queued_ungrouped_index' : '';
    const next = (group: string, after: string) => `(
      select q.id from ${TABLE} q${byGroup}
      where q.status = 'queued' and q.job_group is not null and q.group_ready = 1 and q.job_group = ${group} and q.run_at <= ?
        and q.name in ${inNames}${after}
      order by q.run_at, q.id limit 1)`;
    // Each open group's first `cap - running` due queued rows: PostgreSQL
    // reads them with a lateral subquery; SQLite (no LATERAL) steps through
    // them one index probe at a time, each joined to its row by primary key.
    const heads = sqlite
      ? {
          sql: `with recursive steps(job_group, id, run_at, running, n) as (
            select g.job_group, j.id, j.run_at, g.running, 1 from open_groups g
            join ${TABLE} j on j.id = ${next('g.job_group', '')}
            union all
            select h.job_group, j.id, j.run_at, h.running, h.n + 1 from steps h
            join ${TABLE} j on j.id = ${next('h.job_group', ' and (q.run_at, q.id) > (h.run_at, h.id)')}
            where h.n + h.running < ?)
          select job_group, id, run_at from steps`,
          bindings: [now, ...names, now, ...names, cap],
        }
      : {
          sql: `select g.job_group, j.id, j.run_at from open_groups g
          cross join lateral (
            select q.id, q.run_at from ${TABLE} q
            where q.status = 'queued' and q.job_group is not null and q.group_ready = 1 and q.job_group = g.job_group and q.run_at <= ?
              and q.name in ${inNames}
            order by q.run_at, q.id limit ? - g.running) j`,
          bindings: [now, ...names, cap],
        };
    const sql = `
      with recursive
      occupied as (
        select job_group, count(*) as running from ${TABLE}
        where status = 'running' and job_group is not null and locked_until >= ?
        group by job_group),
      walk(job_group) as (
        select * from (select job_group from ${TABLE}${byGroup} where status = 'queued' and job_group is not null and group_ready = 1
          order by job_group limit 1) first_group
        union all
        select (select w.job_group from ${TABLE} w${byGroup} where w.status = 'queued' and w.job_group is not null and w.group_ready = 1
          and w.job_group > walk.job_group order by w.job_group limit 1)
        from walk where walk.job_group is not null),
      open_groups as (
        select walk.job_group, coalesce(occupied.running, 0) as running from walk
        left join occupied on occupied.job_group = walk.job_group
        where walk.job_group is not null and coalesce(occupied.running, 0) < ?),
      heads as (${heads.sql}),
      grouped_due as (
        select id, run_at, job_group from heads
        union all
        select id, run_at, job_group from ${TABLE}
        where status = 'running' and job_group is not null and locked_until < ? and name in ${inNames}),
      ranked as (
        select grouped_due.id, grouped_due.run_at, coalesce(occupied.running, 0) as running,
          row_number() over (partition by grouped_due.job_group order by grouped_due.run_at, grouped_due.id) as group_rank
        from grouped_due left join occupied on occupied.job_group = grouped_due.job_group),
      grouped as (
        select id from ranked where group_rank + running <= ? order by run_at, id limit ?),
      ungrouped_due as (
        select * from (select id, run_at from ${TABLE}${byAge}
          where status = 'queued' and job_group is null and run_at <= ? and name in ${inNames}
          order by run_at, id limit ?) queued
        union all
        select * from (select id, run_at from ${TABLE}
          where status = 'running' and job_group is null and locked_until < ? and name in ${inNames}
          order by run_at, id limit ?) expired),
      ungrouped as (
        select id from ungrouped_due order by run_at, id limit ?)
      select id from ungrouped
      union all
      select id from grouped`;
    const bindings = [
      now, // occupied
      cap, // open_groups
      ...heads.bindings,
      now,
      ...names, // expired grouped
      cap,
      limit, // grouped
      now,
      ...names,
      limit, // ungrouped queued
      now,
      ...names,
      limit, // ungrouped expired
      limit, // ungrouped
    ];
    return { sql, bindings };
  }

  private execute(row: JobRow): void {
    const registered = this.handlers.get(row.name);
    const controller = new AbortController();
    const key = `${row.id}#${row.attempts}`;
    const done = this.runAttempt(row, registered, controller)
      // The outcome could not be written (the database went away): the lease, no longer renewed, expires and the job is retried.
      .catch((error: unknown) =>
        this.options.logger.error(
          { err: error, job: row.name, job_id: row.id },
          'could not record the outcome of a job attempt; it is retried once its lease expires',
        ),
      )
      .finally(() => {
        this.inFlight.delete(key);
        // A freed slot may take the next due job now rather than at the next idle poll.
        this.wake();
      });
    this.inFlight.set(key, { controller, done });
  }

  private async runAttempt(row: JobRow, registered: Registered | undefined, controller: AbortController): Promise<void> {
    const log = this.options.logger.child({ job: row.name, job_id: row.id, attempt: row.attempts });
    if (!registered) return;
    if (row.attempts > row.max_attempts) {
      await this.finish(row, 'failed', 'Lease expired on the last attempt (the process running it stopped).');
      return;
    }
    const timeoutMs = registered.definition.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const renew = setInterval(
      () => {
        void this.renewLease(row).then((held) => {
          if (!held && !controller.signal.aborted) controller.abort(new JobLeaseLostError());
        });
      },
      Math.max(50, Math.floor(this.options.leaseMs / 3)),
    );
    renew.unref();
    const timeout = setTimeout(() => controller.abort(new Error(`Timed out after ${timeoutMs} ms.`)), timeoutMs);
    timeout.unref();
    const started = this.options.clock.now();
    let handler: Promise<void> | undefined;
    try {
      const aborted = new Promise<never>((_, reject) => {
        controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
      });
      handler = registered.definition.run({
        payload: JSON.parse(row.payload) as unknown,
        attempt: row.attempts,
        scheduledFor: row.scheduled_for,
        signal: controller.signal,
        service: registered.service,
      });
      await Promise.race([handler, aborted]);
      await this.finish(row, 'succeeded', null);
      log.debug({ ms: this.options.clock.now() - started }, 'job succeeded');
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).slice(0, ERROR_LIMIT);
      if (controller.signal.reason instanceof JobLeaseLostError) {
        // Another worker holds the job now: whatever this attempt did, the row is that worker's to record.
        log.warn('job lease lost to another worker; this attempt stopped and recorded nothing');
        return;
      }
      if (controller.signal.reason instanceof JobInterruptedError) {
        // Let the handler settle first (briefly: the shutdown is waiting). One that finished its work anyway is done,
        // not run again; one that failed goes back to the queue; one still going keeps its lease (no longer renewed),
        // so that no other process starts it while it may still be at work.
        const settled = await Promise.race([
          (handler ?? Promise.reject(controller.signal.reason)).then(
            () => 'succeeded' as const,
            () => 'failed' as const,
          ),
          new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), INTERRUPT_SETTLE_MS).unref()),
        ]);
        if (settled === 'succeeded') {
          await this.finish(row, 'succeeded', null);
          return;
        }
        if (settled === 'running') {
          log.warn('job still running at the shutdown; another process takes it over once its lease expires');
          return;
        }
        await this.requeue(row, message, { delayMs: 0, uncount: true });
        log.info('job interrupted by the shutdown; back in the queue, the attempt not counted');
        return;
      }
      this.options.observer?.failed(row.name, row.attempts >= row.max_attempts);
      if (row.attempts >= row.max_attempts) {
        await this.finish(row, 'failed', message);
        log.warn({ error: message }, 'job failed for good');
      } else {
        const delay = this.backoff(row.attempts);
        await this.requeue(row, message, { delayMs: delay, uncount: false });
        log.info({ error: message, retry_in_ms: delay }, 'job attempt failed; retrying');
      }
    } finally {
      clearInterval(renew);
      clearTimeout(timeout);
    }
  }

  /**
   * Exponential back-off with equal jitter (AWS architecture blog, "Exponential Backoff And Jitter"): random in
   * [c/2, c] for c = min(max, base·2^(n-1)) ms, so retries spread out yet never follow a failure at once.
   */
  private backoff(attempt: number): number {
    const ceiling = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  /**
   * The job's row while `row`'s attempt still holds it. The attempt number is the fencing token: once a lease
   * expired, a later claim (by another worker, or by this one: same `locked_by`) increments it, so no write of
   * the stale attempt (renewal, outcome) matches the row again.
   */
  private heldRow(row: JobRow): Knex.QueryBuilder {
    return this.options.sql.knex(TABLE).where({ id: row.id, locked_by: this.workerId, attempts: row.attempts, status: 'running' });
  }

  /**
   * Extends the lease of `row`'s attempt.
   * @returns false when no row matched (the lease expired and a later attempt, of this worker or another, claimed
   *   the job); true when renewed, and when the database could not be reached (the lease may still hold: the
   *   attempt goes on).
   */
  private async renewLease(row: JobRow): Promise<boolean> {
    try {
      const renewed = await this.heldRow(row).update({ locked_until: this.options.clock.now() + this.options.leaseMs });
      return renewed > 0;
    } catch (error) {
      this.options.logger.warn({ err: error, job_id: row.id }, 'could not renew job lease');
      return true;
    }
  }

  /** Writes the outcome of `row`'s attempt, unless a later attempt holds the job (then logs that it wrote nothing). */
  private async record(row: JobRow, changes: Record<string, unknown>): Promise<void> {
    const updated = await this.heldRow(row).update(changes);
    if (updated === 0) {
      this.options.logger.warn(
        { job: row.name, job_id: row.id, attempt: row.attempts },
        'job lease lost before the attempt ended; a later attempt holds the job, so this outcome is not recorded',
      );
    }
  }

  private async finish(row: JobRow, status: 'succeeded' | 'failed', error: string | null): Promise<void> {
    const now = this.options.clock.now();
    await this.record(row, { status, last_error: error, locked_by: null, locked_until: null, finished_at: now, updated_at: now });
  }

  /**
   * Puts the job back in the queue: due after `delayMs` (a failed attempt's
   * back-off), or due now with its attempt uncounted (`uncount`: a shutdown
   * interrupted it). A grouped job due now is ready for the next claim's walk.
   */
  private async requeue(row: JobRow, error: string, options: { delayMs: number; uncount: boolean }): Promise<void> {
    const now = this.options.clock.now();
    await this.record(row, {
      status: 'queued',
      last_error: error,
      run_at: now + options.delayMs,
      ...(options.uncount ? { attempts: this.options.sql.knex.raw('attempts - 1') } : {}),
      group_ready: row.job_group !== null && options.delayMs <= 0 ? 1 : 0,
      locked_by: null,
      locked_until: null,
      updated_at: now,
    });
  }
}

/** Deletes finished jobs older than the retention (succeeded/cancelled 7 days, failed 30 days). */
export async function pruneFinishedJobs(options: { knex: Knex; now: number }): Promise<number> {
  const day = 86_400_000;
  const finishedOk = await options
    .knex(TABLE)
    .whereIn('status', ['succeeded', 'cancelled'])
    .where('finished_at', '<', options.now - 7 * day)
    .delete();
  const failed = await options
    .knex(TABLE)
    .where('status', 'failed')
    .where('finished_at', '<', options.now - 30 * day)
    .delete();
  return finishedOk + failed;
}
