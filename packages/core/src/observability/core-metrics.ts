import type { Knex } from 'knex';
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { Clock } from '../ports/clock.js';
import { diskSpace, type WatchedDisk } from './disk-space.js';
import type { MetricsRegistry } from './metrics-registry.js';

/** The kernel's own series (modules add theirs through the `metrics` port). */
export interface CoreMetrics {
  /** Seconds from the request's arrival to its response, by module, route pattern and status class (`2xx`…). Its `_count` is the request count. */
  httpDuration: Histogram<'module' | 'route' | 'status_class'>;
  /** Requests being answered right now. */
  httpInFlight: Gauge;
  /** Refused authentications and authorizations by reason: `missing`, `unknown`, `limited` (address over the failed-authentication limit), `forbidden` (403). */
  authFailures: Counter<'reason'>;
  /** 429 answers by module and route (per-credential limit, failed-authentication limit, send quota). */
  rateLimited: Counter<'module' | 'route'>;
  /** Seconds between a job falling due and a worker claiming it, by job name. */
  jobClaimLateness: Histogram<'job'>;
  /** Failed job attempts by job name; `final` is `true` when no attempt remains. */
  jobFailures: Counter<'job' | 'final'>;
  /** Signed HTTP deliveries by source (`postbox`, `scheduler`, `other`) and outcome (`delivered`, `rejected` non-2xx, `error` network/timeout, `refused` target). */
  deliveries: Counter<'source' | 'outcome'>;
  /** Seconds per embedder call, by operation (`embed`). */
  embedderDuration: Histogram<'operation'>;
  /** Audit events that could not be written (the request was answered anyway; the error is logged). */
  auditWriteFailures: Counter;
  /** Rate-limit checks of HTTP requests that the rate-limit store did not answer (the request went on unlimited). */
  rateLimiterFailures: Counter;
}

/** Lateness buckets in seconds (10 ms to 10 min). */
const LATENESS_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

/**
 * Registers the kernel's series, plus gauges read at scrape time: the job
 * queue depth (queued jobs already due, by job name, from `core_jobs`) and
 * the database pool (connections in use, callers waiting for one), and the
 * free bytes on each of `disks`.
 */
export function createCoreMetrics(options: {
  metrics: MetricsRegistry;
  knex: Knex;
  clock: Clock;
  disks: readonly WatchedDisk[];
}): CoreMetrics {
  const { metrics, knex, clock, disks } = options;
  if (disks.length > 0) {
    metrics.gauge<'disk'>({
      name: 'agentinfra_disk_free_bytes',
      help: 'Bytes the server may still write on the disk of each folder it writes to (database, blobs), from statfs.',
      labelNames: ['disk'],
      collect: async (gauge) => {
        for (const disk of disks) {
          const space = await diskSpace(disk).catch(() => null);
          if (space === null) gauge.remove({ disk: disk.name });
          else gauge.set({ disk: disk.name }, space.freeBytes);
        }
      },
    });
  }
  metrics.gauge<'job'>({
    name: 'agentinfra_job_queue_depth',
    help: 'Queued jobs that are due (waiting for a worker), by job name.',
    labelNames: ['job'],
    collect: async (gauge) => {
      const rows = (await knex('core_jobs')
        .select('name')
        .count({ count: '*' })
        .where('status', 'queued')
        .where('run_at', '<=', clock.now())
        .groupBy('name')) as Array<{ name: string; count: number | string }>;
      gauge.reset();
      for (const row of rows) gauge.set({ job: row.name }, Number(row.count));
    },
  });
  const pool = () => (knex.client as { pool?: { numUsed(): number; numPendingAcquires(): number } }).pool;
  metrics.gauge({
    name: 'agentinfra_db_pool_in_use',
    help: 'Database connections checked out of the pool.',
    collect: (gauge) => gauge.set(pool()?.numUsed() ?? 0),
  });
  metrics.gauge({
    name: 'agentinfra_db_pool_waiting',
    help: 'Callers waiting for a database connection.',
    collect: (gauge) => gauge.set(pool()?.numPendingAcquires() ?? 0),
  });
  return {
    httpDuration: metrics.histogram({
      name: 'agentinfra_http_request_duration_seconds',
      help: 'HTTP request duration in seconds by module, route pattern and status class.',
      labelNames: ['module', 'route', 'status_class'],
    }),
    httpInFlight: metrics.gauge({ name: 'agentinfra_http_requests_in_flight', help: 'HTTP requests being answered.' }),
    authFailures: metrics.counter({
      name: 'agentinfra_auth_failures_total',
      help: 'Refused authentications (missing, unknown, limited) and authorizations (forbidden).',
      labelNames: ['reason'],
    }),
    rateLimited: metrics.counter({
      name: 'agentinfra_rate_limited_total',
      help: 'Requests refused with 429, by module and route pattern.',
      labelNames: ['module', 'route'],
    }),
    jobClaimLateness: metrics.histogram({
      name: 'agentinfra_job_claim_lateness_seconds',
      help: 'Seconds between a job falling due and a worker claiming it.',
      labelNames: ['job'],
      buckets: LATENESS_BUCKETS,
    }),
    jobFailures: metrics.counter({
      name: 'agentinfra_job_failures_total',
      help: 'Failed job attempts by job name; final="true" when no attempt remains.',
      labelNames: ['job', 'final'],
    }),
    deliveries: metrics.counter({
      name: 'agentinfra_webhook_deliveries_total',
      help: 'Signed HTTP deliveries (postbox webhooks, scheduler callbacks) by source and outcome.',
      labelNames: ['source', 'outcome'],
    }),
    embedderDuration: metrics.histogram({
      name: 'agentinfra_embedder_duration_seconds',
      help: 'Seconds per embedder call.',
      labelNames: ['operation'],
    }),
    auditWriteFailures: metrics.counter({
      name: 'agentinfra_audit_write_failures_total',
      help: 'Audit events that could not be written.',
    }),
    rateLimiterFailures: metrics.counter({
      name: 'agentinfra_rate_limiter_failures_total',
      help: 'HTTP rate-limit checks the rate-limit store did not answer; those requests were not limited.',
    }),
  };
}
