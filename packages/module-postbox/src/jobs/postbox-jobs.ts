import type { JobDefinition } from '@agentinfra/core';
import { MAX_WEBHOOK_TIMEOUT_MS } from '../config.js';
import { RELAY_SEND_TIMEOUT_MS } from '../mail-relay.js';
import { SEND_JOB } from '../outbound.js';
import type { PostboxService } from '../service.js';
import { WEBHOOK_JOB } from '../webhooks.js';

/** The job removing the raw MIME of deleted messages that is still queued. */
export const REMOVE_DELETED_MIME_JOB = 'postbox.remove-deleted-mime';

/**
 * The postbox's background work, run by the core durable job runner:
 * outbound delivery over the relay and webhook deliveries (one job each,
 * retried with exponential back-off and jitter, attempts set per job from
 * config), the daily retention sweep (03:30 UTC, once across replicas), the
 * removal of raw MIME that deletions left queued (every ten minutes), and
 * the hourly reseal of webhook secrets after a master-key rotation.
 */
export const postboxJobs: readonly JobDefinition<PostboxService>[] = [
  {
    name: SEND_JOB,
    // Past the relay's own bound, so that a relay that stalls fails the attempt (and, on the last
    // one, the message) before the runner gives up on it.
    timeoutMs: RELAY_SEND_TIMEOUT_MS + 30_000,
    run: ({ service, payload, attempt, signal }) => service.deliverOutbound({ payload, attempt, signal }),
  },
  {
    name: WEBHOOK_JOB,
    // A backstop past the longest delivery timeout the config accepts: a fixed 60 s cut a 90 s
    // webhookTimeoutMs short, and reported it as an aborted delivery rather than a timeout.
    timeoutMs: MAX_WEBHOOK_TIMEOUT_MS + 30_000,
    run: ({ service, payload, signal }) => service.webhooks.deliver({ payload, signal }),
  },
  {
    name: 'postbox.retention',
    schedule: { cron: '30 3 * * *' },
    timeoutMs: 600_000,
    maxAttempts: 3,
    run: async ({ service, signal }) => {
      await service.sweepRetention({ signal });
    },
  },
  {
    // Retries the raw MIME removals a failed or interrupted deletion left queued (their messages are gone already).
    name: REMOVE_DELETED_MIME_JOB,
    schedule: { every: 600_000 },
    timeoutMs: 600_000,
    run: async ({ service, signal }) => {
      await service.removeDeletedMime(signal);
    },
  },
  {
    name: 'postbox.reseal-secrets',
    schedule: { every: 3_600_000 },
    timeoutMs: 600_000,
    run: async ({ service, signal }) => {
      await service.webhooks.resealSecrets({ signal });
    },
  },
];
