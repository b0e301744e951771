import type { JobDefinition } from '@agentinfra/core';
import { z } from 'zod';
import { ORDER_JOB, RENEW_DUE_JOB, RESEAL_JOB, REVOKE_JOB, REVOKE_MAX_ATTEMPTS } from '../gateway-context.js';
import type { GatewayService } from '../service.js';

const orderPayload = z.object({ order_id: z.string() });
const revocationPayload = z.object({ revocation_id: z.string() });

/**
 * Background work of the gateway, on the core job runner:
 * - `gateway.order`: one attempt of a certificate order (retried with
 *   exponential back-off and jitter up to `gateway.orderMaxAttempts`; the
 *   runner's timeout is a ceiling, `gateway.orderTimeoutMs` applies inside);
 * - `gateway.revoke`: revokes a released host's certificate at the CA;
 * - `gateway.renew-due`: daily (00:00 UTC), the same path as `/cert/renew {}`;
 * - `gateway.reseal-keys`: hourly, reseals the private keys sealed under a
 *   previous master key (finishes a master-key rotation).
 */
export const gatewayJobs: readonly JobDefinition<GatewayService>[] = [
  {
    name: ORDER_JOB,
    timeoutMs: 3_600_000,
    run: ({ payload, attempt, signal, service }) => service.runOrder({ orderId: orderPayload.parse(payload).order_id, attempt, signal }),
  },
  {
    name: REVOKE_JOB,
    maxAttempts: REVOKE_MAX_ATTEMPTS,
    run: ({ payload, attempt, signal, service }) =>
      service.runRevocation({ revocationId: revocationPayload.parse(payload).revocation_id, attempt, signal }),
  },
  {
    name: RENEW_DUE_JOB,
    schedule: { every: 86_400_000 },
    timeoutMs: 600_000,
    run: async ({ service, signal }) => {
      await service.renewDue({ signal });
    },
  },
  {
    name: RESEAL_JOB,
    schedule: { every: 3_600_000 },
    timeoutMs: 600_000,
    run: async ({ service, signal }) => {
      await service.resealKeys({ signal });
    },
  },
];
