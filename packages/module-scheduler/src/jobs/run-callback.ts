import type { JobDefinition } from '@agentinfra/core';
import { MAX_CALLBACK_TIMEOUT_MS } from '../config.js';
import { QUEUE_MAX_ATTEMPTS, RUN_QUEUE_JOB } from '../queue-keys.js';
import type { SchedulerService } from '../service.js';

/**
 * `scheduler.run`: one callback attempt of a fire or a retry series. The
 * delivery's own timeout (`scheduler.callbackTimeoutMs`) ends an attempt
 * first; the job timeout only backs it up.
 */
export const runCallbackJob: JobDefinition<SchedulerService> = {
  name: RUN_QUEUE_JOB,
  timeoutMs: MAX_CALLBACK_TIMEOUT_MS + 30_000,
  maxAttempts: QUEUE_MAX_ATTEMPTS,
  run: ({ payload, signal, service }) => service.executeRun({ payload, signal }),
};
