import { agentIdSchema, instantSchema } from '@agentinfra/core';
import { z } from 'zod';
import { runStatusSchema } from './schemas.js';

/**
 * Request and response bodies of agent-scheduler's operator routes (bridge
 * key only, `/admin/*`): jobs and runs across agents for the console. The
 * admin queries take and return these shapes.
 */

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page (default null: the first page). */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};

/** A job's state: `active` fires on its cadence, `paused` does not. */
export const jobStatusSchema = z.enum(['active', 'paused']);
export type JobStatus = z.output<typeof jobStatusSchema>;

/** POST /job/list: the calling agent's own jobs, optionally of one state; one page. */
export const listJobsRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  status: jobStatusSchema.optional(),
  ...page,
});

/** POST /admin/jobs/list: optionally one agent's jobs and of one state; one page. */
export const adminListJobsRequestSchema = z.strictObject({
  agent_id: agentIdSchema.optional(),
  status: jobStatusSchema.optional(),
  ...page,
});
export type AdminListJobsRequest = z.output<typeof adminListJobsRequestSchema>;
/**
 * A page of jobs in (agent_id, name) order, each with its latest run (null
 * before the first; never a secret); `next_cursor` is null on the last page.
 */
export const adminListJobsResponseSchema = z.object({
  jobs: z.array(
    z.object({
      job_id: z.string(),
      agent_id: z.string(),
      name: z.string(),
      cadence: z.string(),
      timezone: z.string(),
      callback_url: z.string(),
      max_attempts: z.number().int(),
      status: jobStatusSchema,
      next_run_at: instantSchema.nullable(),
      created_at: instantSchema,
      last_run: z
        .object({ run_id: z.string(), status: runStatusSchema, scheduled_for: instantSchema, error: z.string().nullable() })
        .nullable(),
    }),
  ),
  next_cursor: z.string().nullable(),
});
export type AdminListJobsResponse = z.output<typeof adminListJobsResponseSchema>;

/** POST /admin/runs/list: optionally one agent's runs and of one status; one page. */
export const adminListRunsRequestSchema = z.strictObject({
  agent_id: agentIdSchema.optional(),
  status: runStatusSchema.optional(),
  ...page,
});
export type AdminListRunsRequest = z.output<typeof adminListRunsRequestSchema>;
/** A page of runs, most recently changed first, with attempts, retries, error and timing; `next_cursor` is null on the last page. */
export const adminListRunsResponseSchema = z.object({
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
});
export type AdminListRunsResponse = z.output<typeof adminListRunsResponseSchema>;

/** POST /admin/summary: no fields. */
export const adminSummaryRequestSchema = z.strictObject({});
export type AdminSummaryRequest = z.output<typeof adminSummaryRequestSchema>;
/** Counts: jobs (active, paused), jobs whose latest run failed, runs failed in the last 24 h, runs queued or running. */
export const adminSummaryResponseSchema = z.object({
  jobs: z.number().int(),
  active: z.number().int(),
  paused: z.number().int(),
  failing: z.number().int(),
  runs_failed_24h: z.number().int(),
  runs_pending: z.number().int(),
});
export type AdminSummaryResponse = z.output<typeof adminSummaryResponseSchema>;
