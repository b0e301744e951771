import { createListCursor, isoTimestamp, keysetPage, whereAfterKeyset } from '@agentinfra/core';
import type { Knex } from 'knex';
import { z } from 'zod';
import type {
  AdminListJobsRequest,
  AdminListJobsResponse,
  AdminListRunsRequest,
  AdminListRunsResponse,
  AdminSummaryResponse,
} from './admin-schemas.js';
import { JOBS, type JobRow, RUNS, type RunRow } from './job-rows.js';
import type { SchedulerDeps } from './service-deps.js';

const DAY_MS = 86_400_000;

const jobCursor = createListCursor({ schema: z.strictObject({ a: z.string(), n: z.string() }), field: 'cursor' });
const runCursor = createListCursor({ schema: z.strictObject({ u: z.int(), i: z.string() }), field: 'cursor' });

const countOf = (row: unknown) => Number((row as { n: number | string } | undefined)?.n ?? 0);
const iso = (value: number | string | null) => (value === null ? null : isoTimestamp(Number(value)));

/** The latest run (by scheduled instant) of each job in `jobIds`. */
async function latestRuns(knex: Knex, jobIds: readonly string[]): Promise<Map<string, RunRow>> {
  if (jobIds.length === 0) return new Map();
  const rows = (await knex(`${RUNS} as r`)
    .select('r.*')
    .whereIn('r.job_id', [...jobIds])
    .where('r.scheduled_for', '=', knex(`${RUNS} as l`).max('l.scheduled_for').where('l.job_id', knex.ref('r.job_id')))) as RunRow[];
  return new Map(rows.map((row) => [row.job_id, row]));
}

/**
 * What operators see of the scheduler across agents (the console): jobs with
 * cadence, next fire, state and their latest run; runs across jobs, most
 * recently changed first; counts including jobs whose latest run failed.
 */
export function createSchedulerAdmin(deps: Pick<SchedulerDeps, 'sql' | 'clock'>) {
  const knex = () => deps.sql.knex;
  return {
    /**
     * Jobs in (agent_id, name) order, optionally one agent's and of one state,
     * each with its latest run (never the secret or callback signature).
     * @throws InputError for a cursor this list did not make.
     */
    async listJobs(input: AdminListJobsRequest): Promise<AdminListJobsResponse> {
      const query = knex()(JOBS).select(
        'id',
        'agent_id',
        'name',
        'cadence',
        'timezone',
        'callback_url',
        'max_attempts',
        'status',
        'next_run_at',
        'created_at',
      );
      if (input.agent_id !== undefined) query.where({ agent_id: input.agent_id });
      if (input.status !== undefined) query.where({ status: input.status });
      if (input.cursor !== null) {
        const after = jobCursor.decode(input.cursor);
        whereAfterKeyset(query, 'asc', ['agent_id', after.a], ['name', after.n]);
      }
      const rows = (await query.orderBy(['agent_id', 'name']).limit(input.limit + 1)) as JobRow[];
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) => jobCursor.encode({ a: last.agent_id, n: last.name }));
      const latest = await latestRuns(
        knex(),
        page.map((row) => row.id),
      );
      return {
        jobs: page.map((row) => {
          const run = latest.get(row.id);
          return {
            job_id: row.id,
            agent_id: row.agent_id,
            name: row.name,
            cadence: row.cadence,
            timezone: row.timezone,
            callback_url: row.callback_url,
            max_attempts: Number(row.max_attempts),
            status: row.status,
            next_run_at: iso(row.next_run_at),
            created_at: isoTimestamp(Number(row.created_at)),
            last_run: run
              ? { run_id: run.id, status: run.status, scheduled_for: isoTimestamp(Number(run.scheduled_for)), error: run.error }
              : null,
          };
        }),
        next_cursor,
      };
    },

    /**
     * Runs across jobs, most recently changed first, optionally one agent's and of one status.
     * @throws InputError for a cursor this list did not make.
     */
    async listRuns(input: AdminListRunsRequest): Promise<AdminListRunsResponse> {
      const query = knex()(`${RUNS} as r`)
        .join(`${JOBS} as j`, 'j.id', 'r.job_id')
        .select(
          'r.id',
          'r.job_id',
          'r.agent_id',
          'j.name',
          'r.scheduled_for',
          'r.status',
          'r.attempts',
          'r.max_attempts',
          'r.series',
          'r.error',
          'r.started_at',
          'r.finished_at',
          'r.updated_at',
        );
      if (input.agent_id !== undefined) query.where('r.agent_id', input.agent_id);
      if (input.status !== undefined) query.where('r.status', input.status);
      if (input.cursor !== null) {
        const after = runCursor.decode(input.cursor);
        whereAfterKeyset(query, 'desc', ['r.updated_at', after.u], ['r.id', after.i]);
      }
      const rows = (await query
        .orderBy([
          { column: 'r.updated_at', order: 'desc' },
          { column: 'r.id', order: 'desc' },
        ])
        .limit(input.limit + 1)) as Array<RunRow & { name: string }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) => runCursor.encode({ u: Number(last.updated_at), i: last.id }));
      return {
        runs: page.map((row) => ({
          run_id: row.id,
          job_id: row.job_id,
          agent_id: row.agent_id,
          job_name: row.name,
          scheduled_for: isoTimestamp(Number(row.scheduled_for)),
          status: row.status,
          attempts: Number(row.attempts),
          max_attempts: Number(row.max_attempts),
          retries: Number(row.series),
          error: row.error,
          started_at: iso(row.started_at),
          finished_at: iso(row.finished_at),
          updated_at: isoTimestamp(Number(row.updated_at)),
        })),
        next_cursor,
      };
    },

    /** Counts: jobs (active, paused), jobs whose latest run failed, runs failed in the last 24 h, runs queued or running. */
    async summary(): Promise<AdminSummaryResponse> {
      const db = knex();
      const since = deps.clock.now() - DAY_MS;
      const [byStatus, failing, failed24h, pending] = await Promise.all([
        db(JOBS).select('status').count({ n: '*' }).groupBy('status') as Promise<Array<{ status: string; n: number | string }>>,
        db(`${RUNS} as r`)
          .count({ n: '*' })
          .where('r.status', 'failed')
          .where('r.scheduled_for', '=', db(`${RUNS} as l`).max('l.scheduled_for').where('l.job_id', db.ref('r.job_id')))
          .first(),
        db(RUNS).count({ n: '*' }).where('status', 'failed').where('updated_at', '>=', since).first(),
        db(RUNS).count({ n: '*' }).whereIn('status', ['queued', 'running']).first(),
      ]);
      const active = countOf(byStatus.find((row) => row.status === 'active'));
      const paused = countOf(byStatus.find((row) => row.status === 'paused'));
      return {
        jobs: active + paused,
        active,
        paused,
        failing: countOf(failing),
        runs_failed_24h: countOf(failed24h),
        runs_pending: countOf(pending),
      };
    },
  };
}

/** The operator listings of agent-scheduler (see {@link createSchedulerAdmin}). */
export type SchedulerAdmin = ReturnType<typeof createSchedulerAdmin>;
