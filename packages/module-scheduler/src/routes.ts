import { routesFor } from '@agentinfra/core';
import { adminListJobsResponseSchema, listJobsRequestSchema } from './admin-schemas.js';
import { jobListFor } from './callback-url-view.js';
import type { SchedulerPermission } from './permissions.js';
import {
  jobRefRequestSchema,
  jobStatusResponseSchema,
  listRunsRequestSchema,
  listRunsResponseSchema,
  putJobRequestSchema,
  putJobResponseSchema,
  resumeJobResponseSchema,
  retryRunRequestSchema,
  retryRunResponseSchema,
} from './schemas.js';
import type { SchedulerService } from './service.js';

const route = routesFor<SchedulerService, SchedulerPermission>();

/** The agent named in the payload: its device key, a delegation from it with `permission`, or the bridge key. */
const agentAuth = (permission: 'scheduler.read' | 'scheduler.write') =>
  ({ kind: 'agent', permission, agents: (body: { agent_id: string }) => [body.agent_id] }) as const;

/** agent-scheduler routes (SPEC.md §4 agent-scheduler, CONTRACT.md response shapes and bounds, plus /job/resume and /job/list). */
export const schedulerRoutes = [
  route({
    path: '/job/put',
    summary: 'Create or replace a job (upsert by agent_id + name) and activate it; returns its next run.',
    description:
      'Create or replace a scheduled job by name: on each tick of `cadence` (cron, or @every 5m) the service POSTs a signed callback to callback_url, retried up to max_attempts. Returns job_id, name and next_run_at, plus secret once when a new job is put without one (a generated whsec_ signing secret; a job put again without one keeps its own).',
    effects: { destructive: true, idempotent: true, openWorld: true },
    request: putJobRequestSchema,
    response: putJobResponseSchema,
    auth: agentAuth('scheduler.write'),
    handler: ({ body, service }) => service.putJob(body),
  }),
  route({
    path: '/job/pause',
    summary: 'Pause a job: its queued fire is cancelled until /job/resume or /job/put.',
    description: 'Pause a job: no runs until it is resumed or put again. Returns name and status.',
    effects: { idempotent: true },
    request: jobRefRequestSchema,
    response: jobStatusResponseSchema,
    auth: agentAuth('scheduler.write'),
    handler: ({ body, service }) => service.pauseJob(body),
  }),
  route({
    path: '/job/resume',
    summary: 'Resume a paused job from now; returns its next run.',
    description: 'Resume a paused job from now. Returns name, status and next_run_at.',
    effects: { idempotent: true },
    request: jobRefRequestSchema,
    response: resumeJobResponseSchema,
    auth: agentAuth('scheduler.write'),
    handler: ({ body, service }) => service.resumeJob(body),
  }),
  route({
    path: '/job/delete',
    summary: 'Delete a job and its runs; its queued fire and pending retries are cancelled.',
    description: 'Delete a job and its run history; queued runs and retries are cancelled. Returns name and status.',
    effects: { destructive: true, idempotent: true },
    request: jobRefRequestSchema,
    response: jobStatusResponseSchema,
    auth: agentAuth('scheduler.write'),
    handler: ({ body, service }) => service.deleteJob(body),
  }),
  route({
    path: '/job/list',
    summary: "The agent's jobs in name order with cadence, state, next run and latest run (limit 1..500, default 50; cursor).",
    description:
      'List your scheduled jobs in name order, optionally only active or paused ones: cadence, time zone, callback URL, max_attempts, status, next_run_at and the latest run (id, status, instant, error). Secrets are never returned, and a delegation without scheduler.write sees callback URLs without their query string. Pass next_cursor back as `cursor` for the next page.',
    example: { agent_id: 'alice', limit: 50, cursor: null },
    effects: { readOnly: true, idempotent: true },
    request: listJobsRequestSchema,
    response: adminListJobsResponseSchema,
    auth: agentAuth('scheduler.read'),
    handler: async ({ body, service, principal }) => jobListFor(principal, await service.admin.listJobs(body)),
  }),
  route({
    path: '/runs/list',
    summary: 'Runs of a job, newest scheduled instant first (limit 1..500, default 50).',
    description:
      'The runs of a job, newest first, with status (queued, running, succeeded, failed), attempts and the last error. Use it to check that callbacks succeed.',
    effects: { readOnly: true, idempotent: true },
    request: listRunsRequestSchema,
    response: listRunsResponseSchema,
    auth: agentAuth('scheduler.read'),
    handler: ({ body, service }) => service.listRuns(body),
  }),
  route({
    path: '/runs/retry',
    summary: 'Re-queue a finished run as a new attempt series (409 while it is queued or running).',
    description:
      'Run a finished run again as a new attempt series (conflict while it is queued or running). Returns run_id and status queued.',
    effects: { openWorld: true },
    request: retryRunRequestSchema,
    response: retryRunResponseSchema,
    auth: agentAuth('scheduler.write'),
    handler: ({ body, service }) => service.retryRun(body),
  }),
];
