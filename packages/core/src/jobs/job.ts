import type { Knex } from 'knex';

/** When a recurring job is due: every fixed interval, or on a cron expression (UTC). */
export type JobSchedule = { every: number } | { cron: string };

/** What a running job receives. */
export interface JobRunContext<S> {
  /** The JSON payload given to {@link JobQueue.enqueue} (`null` for scheduled occurrences). */
  payload: unknown;
  /** 1 on the first attempt. */
  attempt: number;
  /** For scheduled occurrences: the instant (ms since epoch) this run stands for. */
  scheduledFor: number | null;
  /**
   * Aborted when the job's timeout passes (reason: an Error), the process
   * shuts down (reason: a {@link JobInterruptedError}; the runner hands the
   * job back without counting the attempt, so another process runs it at once)
   * or the lease was lost (reason: a {@link JobLeaseLostError}). The handler
   * must stop its work when it fires: see {@link JobDefinition}.
   */
  signal: AbortSignal;
  /** The owning module's service. */
  service: S;
}

/**
 * A kind of background work owned by a module. Jobs are data: the kernel's
 * durable runner (rows in SQL, leased claims, retries with exponential
 * back-off and equal jitter) executes them, so a restart loses nothing and
 * several processes sharing one database never run one job twice at once,
 * provided each handler stops when its `signal` aborts.
 *
 * The runner cannot stop a handler: on a timeout it aborts the signal and
 * records the attempt as failed at once, so the retry (after its back-off,
 * possibly in another process) may start while a handler that ignores the
 * signal still runs, and both do the work. Likewise after a lost lease. So
 * `run` passes `signal` to everything it waits on (fetch, database calls,
 * sockets) or checks it between steps, and throws once it is aborted; work
 * that cannot be cut short has its own, shorter timeout than `timeoutMs`.
 */
export interface JobDefinition<S = unknown> {
  /** Unique name, `<module area>.<verb>`, e.g. `identity.expiry-sweep`. */
  name: string;
  /** Makes the job recurring; each occurrence is enqueued exactly once across replicas. */
  schedule?: JobSchedule;
  /**
   * Milliseconds one attempt may run before its signal is aborted and it is
   * counted as failed (default 60 000); the retry does not wait for a handler
   * that ignores the signal.
   */
  timeoutMs?: number;
  /** Attempts before the job is marked failed (default 5). */
  maxAttempts?: number;
  run(ctx: JobRunContext<S>): Promise<void>;
}

/** Options of {@link JobQueue.enqueue}. */
export interface EnqueueOptions {
  /** Name of a registered {@link JobDefinition}. */
  name: string;
  /** JSON-serialisable payload. Never put secrets in it: it is stored in plain text. */
  payload?: unknown;
  /** Earliest start, ms since epoch (default now). */
  runAt?: number;
  /** Overrides the definition's `maxAttempts`. */
  maxAttempts?: number;
  /** When set, a second enqueue with the same key is a no-op returning the first job's id. */
  dedupeKey?: string;
  /**
   * Fairness group, at most {@link MAX_GROUP_LENGTH} characters, e.g.
   * `postbox.webhook:<agent_id>`: at most `jobs.groupConcurrency` jobs of one
   * group run at once across all workers sharing the database, so one
   * tenant's slow target cannot take every worker slot. Unset: no cap.
   */
  group?: string;
  /** Enqueue inside this transaction, so the job exists only if it commits. */
  trx?: Knex.Transaction;
}

/** Longest {@link EnqueueOptions.group}, in characters (the column's width). */
export const MAX_GROUP_LENGTH = 255;

/** Job status: `queued` → `running` → `succeeded` | `failed` (or back to `queued` for a retry). */
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A stored job as the runner sees it. */
export interface JobRecord {
  id: string;
  name: string;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  runAt: number;
  lastError: string | null;
  dedupeKey: string | null;
  /** The {@link EnqueueOptions.group}, or null. */
  group: string | null;
}

/** Which jobs {@link JobQueue.cancel} and {@link JobQueue.retry} act on: those with one of `ids`, whose dedupe key starts with `dedupeKeyPrefix`, or both (none when neither is given); inside `trx` when given. */
export interface JobSelection {
  ids?: readonly string[];
  dedupeKeyPrefix?: string;
  trx?: Knex.Transaction;
}

/** The durable queue, available to modules as the `jobs` port. */
export interface JobQueue {
  /** Adds a job. @returns its id and whether it was newly created (false on a dedupe hit). */
  enqueue(options: EnqueueOptions): Promise<{ id: string; created: boolean }>;
  /**
   * Cancels queued jobs by id or by dedupe-key prefix, inside `trx` when given
   * (so that the change that makes them pointless commits with it).
   * @returns how many were cancelled.
   */
  cancel(options: JobSelection): Promise<number>;
  /**
   * Puts failed jobs back in the queue, due now, with their attempts reset
   * (pg-boss's `retry`), by id or by dedupe-key prefix, inside `trx` when
   * given — e.g. an operator redelivering the webhooks that failed while
   * their receiver was down. A job keeps its id, payload, dedupe key and
   * group; jobs in any other status are left alone.
   * @returns how many were put back.
   */
  retry(options: JobSelection): Promise<number>;
  /** Reads one job, by id or by its dedupe key. @returns null when no such job is stored (it never was, or it was pruned). */
  get(options: { id: string } | { dedupeKey: string }): Promise<JobRecord | null>;
}

/**
 * The abort reason of a job's signal when its process shuts down before the
 * job finished. A handler that stops (throws) within a second does not have
 * the attempt counted toward `maxAttempts`: the runner puts the job back in
 * the queue, due now, for another process. One that completes anyway is
 * recorded as succeeded; one still running keeps its lease, so no other
 * process starts it before the lease expires (then it is retried, counted).
 * A handler that keeps its own attempt count (the scheduler's runs) checks
 * `signal.reason instanceof JobInterruptedError` to do the same.
 */
export class JobInterruptedError extends Error {
  constructor() {
    super('The server is shutting down; the job goes back to the queue.');
    this.name = 'JobInterruptedError';
  }
}

/**
 * The abort reason of a job's signal when its lease was found taken over: the
 * renewal matched no row, because the lease expired (a database outage, a
 * stalled event loop) and a later attempt claimed the job, in another process
 * or in this one. That attempt runs it now, so this one should stop; the
 * runner records nothing for it (its writes are fenced by the attempt number).
 */
export class JobLeaseLostError extends Error {
  constructor() {
    super('The job lease expired and another worker took the job over; this attempt stops.');
    this.name = 'JobLeaseLostError';
  }
}
