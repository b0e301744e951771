import { routesFor } from '@agentinfra/core';
import {
  adminListJobsRequestSchema,
  adminListJobsResponseSchema,
  adminListRunsRequestSchema,
  adminListRunsResponseSchema,
  adminSummaryRequestSchema,
  adminSummaryResponseSchema,
} from './admin-schemas.js';
import type { SchedulerPermission } from './permissions.js';
import type { SchedulerService } from './service.js';

const route = routesFor<SchedulerService, SchedulerPermission>();

const readOnly = { readOnly: true, idempotent: true };

/**
 * Operator routes of agent-scheduler (bridge key only): jobs and runs across
 * agents for the console. Pausing, resuming, deleting and retrying stay on
 * /job/pause, /job/resume, /job/delete and /runs/retry, which take the
 * bridge key too.
 */
export const schedulerAdminRoutes = [
  route({
    path: '/admin/jobs/list',
    summary: 'Jobs across agents with cadence, next run, state and latest run (operators only).',
    description:
      'List scheduled jobs in (agent_id, name) order, optionally one agent’s and of one state (active, paused): cadence, time zone, callback URL, max_attempts, next_run_at and the latest run (id, status, instant, error). Secrets are never returned. Pass next_cursor back as `cursor` for the next page.',
    example: { status: 'active', limit: 50, cursor: null },
    effects: readOnly,
    request: adminListJobsRequestSchema,
    response: adminListJobsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listJobs(body),
  }),
  route({
    path: '/admin/runs/list',
    summary: 'Runs across jobs and agents, most recently changed first, with status, attempts, error and timing (operators only).',
    description:
      'List runs across every job, most recently changed first, optionally one agent’s and of one status (queued, running, succeeded, failed): run_id, job, agent, scheduled_for, status, attempts of max_attempts, retries, error, started_at and finished_at. Retry a finished run with /runs/retry. Pass next_cursor back as `cursor` for the next page.',
    example: { status: 'failed', limit: 50, cursor: null },
    effects: readOnly,
    request: adminListRunsRequestSchema,
    response: adminListRunsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listRuns(body),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of jobs, jobs whose latest run failed, runs failed in 24 h and runs pending (operators only).',
    description:
      'Service-wide counts for dashboards: jobs (active, paused), failing jobs (latest run failed), runs failed in the last 24 hours, runs queued or running.',
    example: {},
    effects: readOnly,
    request: adminSummaryRequestSchema,
    response: adminSummaryResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
