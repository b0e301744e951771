import {
  assertWithinQuota,
  ConflictError,
  checkTargetField,
  createListCursor,
  InputError,
  isoTimestamp,
  keysetPage,
  lockedWhen,
  NotFoundError,
  newId,
  newWebhookSecret,
  resealSealedColumn,
} from '@agentinfra/core';
import type { Knex } from 'knex';
import { z } from 'zod';
import { createSchedulerAdmin } from './admin-queries.js';
import { type Cadence, parseCadence, sameCadence } from './cadence.js';
import { createCallbackRunner } from './callback-run.js';
import { schedulerConfigSchema } from './config.js';
import { scheduleNextFire } from './fire-chain.js';
import { cadenceColumns, cadenceOf, JOBS, type JobRow, RUNS, type RunRow, runView, secretContext } from './job-rows.js';
import { jobKeyPrefix, QUEUE_MAX_ATTEMPTS, RUN_QUEUE_JOB, retryKey, runGroupOf } from './queue-keys.js';
import { type ReconcileResult, reconcileScheduler } from './reconcile.js';
import { pruneFinishedRuns } from './run-retention.js';
import {
  type JobRefRequest,
  type JobStatusResponse,
  type ListRunsRequest,
  type ListRunsResponse,
  type PutJobRequest,
  type PutJobResponse,
  type ResumeJobResponse,
  type RetryRunRequest,
  type RetryRunResponse,
  type RunPayload,
  runPayloadSchema,
} from './schemas.js';
import { forgetReplacedSecrets, keptSecretColumns, secretColumnsAfterPut } from './secret-rotation.js';
import type { SchedulerDeps } from './service-deps.js';

/** /runs/list pages: the scheduled instant (ms) of the last run listed; unique per job. */
const runsCursor = createListCursor({ schema: z.strictObject({ s: z.int() }), field: 'cursor' });

/**
 * agent-scheduler without HTTP (SPEC.md §4 agent-scheduler, CONTRACT.md
 * shapes and bounds): jobs that call an agent's HTTPS callback on a cron or
 * `@every` cadence with Standard Webhooks signatures, retries with back-off,
 * and a history of runs.
 *
 * Firing: each job has exactly one queued fire (its `next_run_at`) in the
 * core job runner, with dedupe key (job, instant). Executing a fire creates
 * the run (unique per job and instant) and queues the next instant in one
 * transaction holding the job row, so every instant fires once across
 * replicas, and a restart loses nothing (the queue is durable). Methods take
 * the parsed request (`z.output` of the route's schema): the kernel parses
 * each HTTP body once; library callers parse with `parseRequest` from core
 * when their input is not already typed.
 */
export function createSchedulerService(deps: SchedulerDeps) {
  const config = schedulerConfigSchema.parse(deps.moduleConfig ?? {});
  const knex = () => deps.sql.knex;
  const lock = deps.sql.capabilities.multiProcess;
  const runner = createCallbackRunner(deps, config);

  const lockJob = (trx: Knex.Transaction, agentId: string, name: string) =>
    lockedWhen(trx(JOBS).where({ agent_id: agentId, name }), lock).first() as Promise<JobRow | undefined>;

  const notFound = (name: string) => new NotFoundError(`No job named "${name}" for this agent.`);

  /**
   * Cancels queue jobs a committed change superseded. Best effort: one left
   * queued finds its fire stale when it runs (epoch and status checks) and
   * does nothing, so a failure here must not fail the change.
   */
  async function cancelQueued(ids: Array<string | null>): Promise<void> {
    const present = ids.filter((id): id is string => id !== null);
    if (present.length === 0) return;
    await deps.jobs.cancel({ ids: present }).catch((error: unknown) => {
      deps.logger.warn({ err: error }, 'scheduler: could not cancel superseded fires; they will find themselves stale');
    });
  }

  /** Upserts in one transaction. @returns the job id, its next fire and a superseded queue job to cancel. */
  async function upsert(
    body: PutJobRequest,
    cadence: Cadence,
    quota: number,
  ): Promise<{ jobId: string; next: number | null; supersededQueueId: string | null; generatedSecret?: string }> {
    return knex().transaction(async (trx: Knex.Transaction) => {
      const now = deps.clock.now();
      const existing = await lockJob(trx, body.agent_id, body.name);
      if (!existing) {
        await deps.sql.lockInTransaction(trx, `scheduler:jobs:${body.agent_id}`);
        const used = Number((await trx(JOBS).where({ agent_id: body.agent_id }).count({ n: '*' }).first())?.n ?? 0);
        assertWithinQuota({
          agentId: body.agent_id,
          used,
          quota,
          what: 'scheduler jobs',
          setting: 'scheduler_max_jobs_per_agent',
          release: 'delete one with /job/delete first',
        });
      }
      const jobId = existing?.id ?? newId('job_');
      // Without a secret, a new job gets a generated one and a job put again keeps its own.
      const generatedSecret = body.secret === undefined && !existing ? newWebhookSecret() : undefined;
      const secret = body.secret ?? generatedSecret;
      const keepSchedule =
        existing !== undefined &&
        existing.status === 'active' &&
        existing.next_run_at !== null &&
        sameCadence(cadenceOf(existing), cadence);
      const fields = {
        cadence: body.cadence,
        ...cadenceColumns(cadence),
        callback_url: body.callback_url,
        ...(secret === undefined && existing
          ? keptSecretColumns(existing)
          : secretColumnsAfterPut({ secretBox: deps.secretBox, jobId, secret: secret as string, existing, now })),
        max_attempts: body.max_attempts,
        catch_up: body.catch_up,
        status: 'active' as const,
        anchor_at: keepSchedule && existing ? Number(existing.anchor_at) : now,
        updated_at: now,
      };
      const epoch = existing ? Number(existing.fire_epoch) : 0;
      if (existing) await trx(JOBS).where({ id: jobId }).update(fields);
      else {
        await trx(JOBS).insert({
          id: jobId,
          agent_id: body.agent_id,
          name: body.name,
          ...fields,
          next_run_at: null,
          next_fire_queue_id: null,
          fire_epoch: 0,
          created_at: now,
        });
      }
      if (keepSchedule && existing) return { jobId, next: Number(existing.next_run_at), supersededQueueId: null, generatedSecret };
      const job = { id: jobId, agent_id: body.agent_id, ...fields, fire_epoch: epoch };
      const scheduled = await scheduleNextFire({ trx, jobs: deps.jobs, job, after: now, now, restart: true });
      if (!scheduled) throw new InputError('Invalid cadence: it has no occurrence after now.');
      const previous = existing?.next_fire_queue_id ?? null;
      return { jobId, next: scheduled.at, supersededQueueId: previous !== scheduled.queueId ? previous : null, generatedSecret };
    });
  }

  return {
    /** The validated `scheduler` config section. */
    config,

    /**
     * Creates or replaces the job (agent_id, name) and (re)activates it.
     * Putting the same cadence again keeps the job's schedule (an idempotent
     * put never postpones a fire); a new cadence, or a paused job, is
     * scheduled from now. The secret is stored sealed and never returned;
     * without one, a new job gets a generated `whsec_` secret (CONTRACT.md
     * "Signed deliveries") and a job put again keeps the secret it has.
     * @returns `{ job_id: 'job_…', name, next_run_at: ISO 8601 UTC }`, plus `secret` when one was generated (shown once).
     * @throws InputError (400) for a malformed body, an invalid cadence (with the reason) or a
     *   callback URL refused by the SSRF rules (not HTTPS, private address, unresolvable); ConflictError (409)
     *   for a new name when the agent holds its quota of jobs (setting `scheduler_max_jobs_per_agent`).
     */
    async putJob(body: PutJobRequest): Promise<PutJobResponse> {
      const cadence = parseCadence({
        cadence: body.cadence,
        timezone: body.timezone,
        minIntervalMs: config.minIntervalMs,
        now: deps.clock.now(),
      });
      await checkTargetField(deps.delivery, body.callback_url, 'callback_url');
      let result: Awaited<ReturnType<typeof upsert>>;
      // Read before the transaction: on SQLite the pool's one connection belongs to the transaction inside it.
      const quota = await deps.settings.get<number>('scheduler_max_jobs_per_agent');
      try {
        result = await upsert(body, cadence, quota);
      } catch (error) {
        // Two first puts of the same name raced: the loser updates the winner's row.
        if (!deps.sql.isUniqueViolation(error)) throw error;
        result = await upsert(body, cadence, quota);
      }
      await cancelQueued([result.supersededQueueId]);
      const response = { job_id: result.jobId, name: body.name, next_run_at: isoTimestamp(result.next as number) };
      return result.generatedSecret === undefined ? response : { ...response, secret: result.generatedSecret };
    },

    /**
     * Pauses a job: its queued fire is cancelled and no instant fires until
     * it is resumed. Runs already started keep their remaining attempts.
     * @returns `{ name, status: 'paused' }` (also when it was already paused).
     * @throws NotFoundError (404) when the agent has no such job.
     */
    async pauseJob(body: JobRefRequest): Promise<JobStatusResponse> {
      const cancel = await knex().transaction(async (trx: Knex.Transaction) => {
        const job = await lockJob(trx, body.agent_id, body.name);
        if (!job) throw notFound(body.name);
        if (job.status === 'paused') return null;
        await trx(JOBS)
          .where({ id: job.id })
          .update({ status: 'paused', next_run_at: null, next_fire_queue_id: null, updated_at: deps.clock.now() });
        return job.next_fire_queue_id;
      });
      await cancelQueued([cancel]);
      return { name: body.name, status: 'paused' };
    },

    /**
     * Resumes a paused job from now, as a `/job/put` of the same cadence on
     * the paused job would: an `@every` job's anchor moves to now, so its
     * next fire is now + interval; a cron job fires at its next occurrence
     * after now. Instants missed while paused are not caught up.
     * @returns `{ name, status: 'active', next_run_at }`; an active job is returned unchanged.
     * @throws NotFoundError (404) when the agent has no such job.
     */
    async resumeJob(body: JobRefRequest): Promise<ResumeJobResponse> {
      const next = await knex().transaction(async (trx: Knex.Transaction) => {
        const job = await lockJob(trx, body.agent_id, body.name);
        if (!job) throw notFound(body.name);
        if (job.status === 'active' && job.next_run_at !== null) return Number(job.next_run_at);
        const now = deps.clock.now();
        const resumed = { status: 'active' as const, anchor_at: now, updated_at: now };
        await trx(JOBS).where({ id: job.id }).update(resumed);
        const scheduled = await scheduleNextFire({ trx, jobs: deps.jobs, job: { ...job, ...resumed }, after: now, now, restart: true });
        if (!scheduled) throw new InputError('The job cannot resume: its cadence has no occurrence after now.');
        return scheduled.at;
      });
      return { name: body.name, status: 'active', next_run_at: isoTimestamp(next) };
    },

    /**
     * Deletes a job with its run history; its queued fire and pending retries are cancelled.
     * @returns `{ name, status: 'deleted' }`.
     * @throws NotFoundError (404) when the agent has no such job.
     */
    async deleteJob(body: JobRefRequest): Promise<JobStatusResponse> {
      await knex().transaction(async (trx: Knex.Transaction) => {
        const job = await lockJob(trx, body.agent_id, body.name);
        if (!job) throw notFound(body.name);
        await trx(RUNS).where({ job_id: job.id }).delete();
        await trx(JOBS).where({ id: job.id }).delete();
        await deps.jobs.cancel({ dedupeKeyPrefix: jobKeyPrefix(job.id), trx });
      });
      return { name: body.name, status: 'deleted' };
    },

    /**
     * A job's runs, newest scheduled instant first, a page at a time (through
     * the unique index on the job and the scheduled instant).
     * @returns `{ runs: [{ id, scheduled_for, status, attempts, error, started_at, finished_at }], next_cursor }`,
     *   at most `limit` (default 50, 1..500) runs; `next_cursor` is null on the last page.
     * @throws NotFoundError (404) when the agent has no such job; InputError (400) for a cursor this route did not issue.
     */
    async listRuns(body: ListRunsRequest): Promise<ListRunsResponse> {
      const before = body.cursor === null ? null : runsCursor.decode(body.cursor).s;
      const job = (await knex()(JOBS).select('id').where({ agent_id: body.agent_id, name: body.name }).first()) as
        | Pick<JobRow, 'id'>
        | undefined;
      if (!job) throw notFound(body.name);
      const query = knex()(RUNS).where({ job_id: job.id });
      if (before !== null) query.where('scheduled_for', '<', before);
      const rows = (await query.orderBy('scheduled_for', 'desc').limit(body.limit + 1)) as RunRow[];
      const { page, next_cursor } = keysetPage(rows, body.limit, (last) => runsCursor.encode({ s: Number(last.scheduled_for) }));
      return {
        runs: page.map(runView),
        next_cursor,
      };
    },

    /**
     * Re-queues a finished run (succeeded or failed) as a new attempt
     * series: attempts restart at 0 under the job's current `max_attempts`,
     * and its callbacks carry a new `webhook-id` (`<run_id>_<n>`). Queued in
     * the agent's fairness group ({@link runGroupOf}), like its fires.
     * @returns `{ run_id, status: 'queued' }`.
     * @throws NotFoundError (404) when the agent has no such run; ConflictError (409) while the
     *   run is still queued or running.
     */
    async retryRun(body: RetryRunRequest): Promise<RetryRunResponse> {
      await knex().transaction(async (trx: Knex.Transaction) => {
        const run = (await lockedWhen(trx(RUNS).where({ id: body.run_id, agent_id: body.agent_id }), lock).first()) as RunRow | undefined;
        const job = run ? ((await trx(JOBS).where({ id: run.job_id }).first()) as JobRow | undefined) : undefined;
        if (!run || !job) throw new NotFoundError(`No run "${body.run_id}" for this agent.`);
        if (run.status === 'queued' || run.status === 'running') {
          throw new ConflictError(`The run is ${run.status}; it can be retried once it has finished.`, { status: run.status });
        }
        const series = run.series + 1;
        const payload: RunPayload = { kind: 'retry', run_id: run.id, series };
        const { id } = await deps.jobs.enqueue({
          name: RUN_QUEUE_JOB,
          payload,
          dedupeKey: retryKey(job.id, run.id, series),
          maxAttempts: QUEUE_MAX_ATTEMPTS,
          group: runGroupOf(job.agent_id),
          trx,
        });
        await trx(RUNS).where({ id: run.id }).update({
          status: 'queued',
          attempts: 0,
          max_attempts: job.max_attempts,
          series,
          error: null,
          queue_id: id,
          started_at: null,
          finished_at: null,
          updated_at: deps.clock.now(),
        });
      });
      return { run_id: body.run_id, status: 'queued' };
    },

    /**
     * Executes one `scheduler.run` queue job (called by the core job runner).
     * @throws Error after a failed attempt that has attempts left, so the runner retries it with back-off.
     */
    async executeRun(options: { payload: unknown; signal: AbortSignal }): Promise<void> {
      const payload = runPayloadSchema.parse(options.payload);
      await runner.execute(payload, options.signal);
    },

    /** One reconcile pass (called every minute by the core job runner). */
    reconcile(): Promise<ReconcileResult> {
      return reconcileScheduler(deps, deps.clock.now());
    },

    /**
     * Deletes finished runs older than `scheduler.runRetentionDays` and
     * forgets replaced secrets past their grace window (the hourly
     * `scheduler.prune-runs` job).
     * @param options.signal checked before it starts and between batches of runs (the job's).
     * @returns how many runs were deleted.
     * @throws the signal's reason once it aborted; what was not deleted is left for the next run.
     */
    async pruneRuns(options: { signal?: AbortSignal } = {}): Promise<number> {
      options.signal?.throwIfAborted();
      await forgetReplacedSecrets(deps.sql.knex, deps.clock.now(), config.secretRotationGraceMs);
      return pruneFinishedRuns(deps, config.runRetentionDays, options.signal);
    },

    /**
     * Finishes a master-key rotation for the scheduler (the hourly
     * `scheduler.reseal-secrets` job): every callback secret sealed under an
     * older key version is sealed again under the current one (same job
     * context), and so is a replaced secret kept for a rotation's grace window,
     * unless a `/job/put` replaced it meanwhile. Idempotent; stops
     * between pages when `signal` aborts.
     * @returns how many secrets were resealed.
     * @throws UnopenedSealedValuesError when some secrets could not be opened, naming up to 5 job ids (the others
     *   are resealed all the same).
     */
    async resealSecrets(options: { signal?: AbortSignal } = {}): Promise<number> {
      let resealed = 0;
      for (const sealedColumn of ['secret_sealed', 'previous_secret_sealed'] as const) {
        resealed += await resealSealedColumn({
          sql: deps.sql,
          secretBox: deps.secretBox,
          table: JOBS,
          keyColumns: ['id'],
          sealedColumn,
          contextOf: (row: Pick<JobRow, 'id'>) => secretContext(row.id),
          what: sealedColumn === 'secret_sealed' ? 'scheduler callback secret' : 'replaced scheduler callback secret',
          signal: options.signal,
        });
      }
      return resealed;
    },

    /** Jobs and runs across agents for operators (the `/admin/*` routes). */
    admin: createSchedulerAdmin(deps),
  };
}

/** The agent-scheduler service. */
export type SchedulerService = ReturnType<typeof createSchedulerService>;
