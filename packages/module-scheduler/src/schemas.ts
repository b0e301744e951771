import { agentIdSchema, instantSchema, webhookSecretSchema } from '@agentinfra/core';
import { z } from 'zod';

/**
 * Request and response bodies of agent-scheduler (SPEC.md §4 agent-scheduler,
 * CONTRACT.md response shapes and bounds). The service takes and returns
 * these shapes, so HTTP and library callers see the same thing.
 */

/** A job name: 1–128 letters, digits or `_ . : @ / -`, starting with a letter or digit; unique per agent. */
export const jobNameSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:@/-]*$/, 'must be 1–128 letters, digits or _ . : @ / -, starting with a letter or digit');

/** What a missed fire does when its job's instant passed while the server was down: run it once, or drop it. */
export const catchUpSchema = z.enum(['once', 'skip']);
/** A job's catch-up policy. */
export type CatchUp = z.infer<typeof catchUpSchema>;

/** Run status (CONTRACT.md): `queued` → `running` → `succeeded` | `failed` (`queued` again between attempts). */
export const runStatusSchema = z.enum(['queued', 'running', 'succeeded', 'failed']);
/** A run's status. */
export type RunStatus = z.infer<typeof runStatusSchema>;

/** POST /job/put: upsert by (agent_id, name); also resumes a paused job. */
export const putJobRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  name: jobNameSchema,
  cadence: z
    .string()
    .min(1)
    .max(256)
    .describe(
      'Cron (5 fields, or 6 with seconds first), a macro (@hourly, @daily, …) or "@every <n><unit>" (s, m, h, d); optional "CRON_TZ=<zone> " prefix.',
    ),
  timezone: z.string().min(1).max(64).optional().describe('IANA time zone the cron fields are read in (default UTC).'),
  callback_url: z.string().min(1).max(2048).describe('HTTPS URL POSTed on each run (public addresses only).'),
  secret: webhookSecretSchema
    .optional()
    .describe(
      `${webhookSecretSchema.description} Stored sealed, never returned. Omitted: a new job gets a generated whsec_ secret (in the response, once); a job put again keeps its secret.`,
    ),
  max_attempts: z.number().int().min(1).max(20).default(3).describe('Attempts per run: 1..20, default 3.'),
  catch_up: catchUpSchema
    .default('once')
    .describe('A fire missed while the server was down: "once" (default) runs it once, "skip" drops it.'),
});
export type PutJobRequest = z.output<typeof putJobRequestSchema>;
/** The job's id and next run, plus the generated `secret` (shown once) when a new job was put without one. */
export const putJobResponseSchema = z.object({
  job_id: z.string(),
  name: z.string(),
  next_run_at: instantSchema,
  secret: z.string().optional(),
});
export type PutJobResponse = z.output<typeof putJobResponseSchema>;

/** POST /job/pause, /job/resume, /job/delete. */
export const jobRefRequestSchema = z.strictObject({ agent_id: agentIdSchema, name: jobNameSchema });
export type JobRefRequest = z.output<typeof jobRefRequestSchema>;
export const jobStatusResponseSchema = z.object({ name: z.string(), status: z.enum(['active', 'paused', 'deleted']) });
export type JobStatusResponse = z.output<typeof jobStatusResponseSchema>;
export const resumeJobResponseSchema = jobStatusResponseSchema.extend({ next_run_at: instantSchema });
export type ResumeJobResponse = z.output<typeof resumeJobResponseSchema>;

/** POST /runs/list: newest scheduled instant first. */
export const listRunsRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  name: jobNameSchema,
  limit: z.number().int().min(1).max(500).default(50).describe('Runs returned: 1..500, default 50.'),
  cursor: z
    .string()
    .max(512)
    .nullable()
    .default(null)
    .describe('The next_cursor of the previous page; null or absent for the newest runs.'),
});
export type ListRunsRequest = z.output<typeof listRunsRequestSchema>;
export const runViewSchema = z.object({
  id: z.string(),
  scheduled_for: instantSchema,
  status: runStatusSchema,
  attempts: z.number().int(),
  error: z.string().nullable(),
  started_at: instantSchema.nullable(),
  finished_at: instantSchema.nullable(),
});
export type RunView = z.output<typeof runViewSchema>;
/** A page of runs; `next_cursor` is null on the last page. */
export const listRunsResponseSchema = z.object({ runs: z.array(runViewSchema), next_cursor: z.string().nullable() });
export type ListRunsResponse = z.output<typeof listRunsResponseSchema>;

/** POST /runs/retry: re-queues a finished run as a new attempt series. */
export const retryRunRequestSchema = z.strictObject({ agent_id: agentIdSchema, run_id: z.string().min(1).max(64) });
export type RetryRunRequest = z.output<typeof retryRunRequestSchema>;
export const retryRunResponseSchema = z.object({ run_id: z.string(), status: z.literal('queued') });
export type RetryRunResponse = z.output<typeof retryRunResponseSchema>;

/** Payload of the `scheduler.run` queue job: one fire of a job, or one retry series of a run. */
export const runPayloadSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('fire'), job_id: z.string(), epoch: z.number().int().min(0), scheduled_for: z.number().int() }),
  z.object({ kind: z.literal('retry'), run_id: z.string(), series: z.number().int().min(1) }),
]);
export type RunPayload = z.output<typeof runPayloadSchema>;
