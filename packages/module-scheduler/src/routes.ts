import { routesFor } from '@agentinfra/core';
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

const route = routesFor<SchedulerService>();

/** The agent named in the payload: its device key, a delegation from it with `permission`, or the bridge key. */
const agentAuth = (permission: 'scheduler.read' | 'scheduler.write') =>
  ({ kind: 'agent', permission, agents: (body: { agent_id: string }) => [body.agent_id] }) as const;

/** agent-scheduler routes (SPEC.md §4 agent-scheduler, CONTRACT.md response shapes and bounds, plus /job/resume). */
export const schedulerRoutes = [
  route({
    path: '/job/put',
    summary: 'Create or replace a job (upsert by agent_id + name) and activate it; returns its next run.',
    request: putJobRequestSchema,
    response: putJobResponseSchema,
    auth: agentAuth('scheduler.write'),
    handler: ({ body, service }) => service.putJob(body),
  }),
  route({
    path: '/job/pause',
    summary: 'Pause a job: its queued fire is cancelled until /job/resume or /job/put.',
    request: jobRefRequestSchema,
    response: jobStatusResponseSchema,
    auth: agentAuth('scheduler.write'),
    handler: ({ body, service }) => service.pauseJob(body),
  }),
  route({
    path: '/job/resume',
    summary: 'Resume a paused job from now; returns its next run.',
    request: jobRefRequestSchema,
    response: resumeJobResponseSchema,
    auth: agentAuth('scheduler.write'),
    handler: ({ body, service }) => service.resumeJob(body),
  }),
  route({
    path: '/job/delete',
    summary: 'Delete a job and its runs; its queued fire and pending retries are cancelled.',
    request: jobRefRequestSchema,
    response: jobStatusResponseSchema,
    auth: agentAuth('scheduler.write'),
    handler: ({ body, service }) => service.deleteJob(body),
  }),
  route({
    path: '/runs/list',
    summary: 'Runs of a job, newest scheduled instant first (limit 1..500, default 50).',
    request: listRunsRequestSchema,
    response: listRunsResponseSchema,
    auth: agentAuth('scheduler.read'),
    handler: ({ body, service }) => service.listRuns(body),
  }),
  route({
    path: '/runs/retry',
    summary: 'Re-queue a finished run as a new attempt series (409 while it is queued or running).',
    request: retryRunRequestSchema,
    response: retryRunResponseSchema,
    auth: agentAuth('scheduler.write'),
    handler: ({ body, service }) => service.retryRun(body),
  }),
];
