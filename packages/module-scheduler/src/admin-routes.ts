import { agentIdSchema, instantSchema, routesFor } from '@agentinfra/core';
import { z } from 'zod';
import type { SchedulerPermission } from './permissions.js';
import { runStatusSchema } from './schemas.js';
import type { SchedulerService } from './service.js';

const route = routesFor<SchedulerService, SchedulerPermission>();

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page. */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};
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
    request: z.strictObject({ agent_id: agentIdSchema.optional(), status: z.enum(['active', 'paused']).optional(), ...page }),
    response: z.object({
      jobs: z.array(
        z.object({
          job_id: z.string(),
          agent_id: z.string(),
          name: z.string(),
          cadence: z.string(),
          timezone: z.string(),
          callback_url: z.string(),
          max_attempts: z.number().int(),
          status: z.enum(['active', 'paused']),
          next_run_at: instantSchema.nullable(),
          created_at: instantSchema,
          last_run: z
            .object({ run_id: z.string(), status: runStatusSchema, scheduled_for: instantSchema, error: z.string().nullable() })
            .nullable(),
        }),
      ),
      next_cursor: z.string().nullable(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) =>
      service.admin.listJobs({ agentId: body.agent_id, status: body.status, limit: body.limit, cursor: body.cursor }),
  }),
  route({
    path: '/admin/runs/list',
    summary: 'Runs across jobs and agents, most recently changed first, with status, attempts, error and timing (operators only).',
    description:
      'List runs across every job, most recently changed first, optionally one agent’s and of one status (queued, running, succeeded, failed): run_id, job, agent, scheduled_for, status, attempts of max_attempts, retries, error, started_at and finished_at. Retry a finished run with /runs/retry. Pass next_cursor back as `cursor` for the next page.',
    example: { status: 'failed', limit: 50, cursor: null },
    effects: readOnly,
    request: z.strictObject({ agent_id: agentIdSchema.optional(), status: runStatusSchema.optional(), ...page }),
    response: z.object({
      runs: z.array(
        z.object({
          run_id: z.string(),
          job_id: z.string(),
          agent_id: z.string(),
          job_name: z.string(),
          scheduled_for: instantSchema,
          status: runStatusSchema,
          attempts: z.number().int(),
          max_attempts: z.number().int(),
          retries: z.number().int(),
          error: z.string().nullable(),
          started_at: instantSchema.nullable(),
          finished_at: instantSchema.nullable(),
          updated_at: instantSchema,
        }),
      ),
      next_cursor: z.string().nullable(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) =>
      service.admin.listRuns({ agentId: body.agent_id, status: body.status, limit: body.limit, cursor: body.cursor }),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of jobs, jobs whose latest run failed, runs failed in 24 h and runs pending (operators only).',
    description:
      'Service-wide counts for dashboards: jobs (active, paused), failing jobs (latest run failed), runs failed in the last 24 hours, runs queued or running.',
    example: {},
    effects: readOnly,
    request: z.strictObject({}),
    response: z.object({
      jobs: z.number().int(),
      active: z.number().int(),
      paused: z.number().int(),
      failing: z.number().int(),
      runs_failed_24h: z.number().int(),
      runs_pending: z.number().int(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
