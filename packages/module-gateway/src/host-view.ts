import { instantSchema } from '@agentinfra/core';
import { z } from 'zod';

/** ACME order states as the gateway reports them. */
export const orderStatusSchema = z.enum(['queued', 'processing', 'valid', 'failed', 'cancelled']);

/** A bound host as /list and /admin/hosts/list describe it: certificate expiry and status, IPs, latest order. */
export const hostViewSchema = z.object({
  host: z.string(),
  agent_id: z.string(),
  cert_expires_at: instantSchema.nullable(),
  days_remaining: z.number().int().nullable(),
  ips: z.array(z.string()),
  bound_at: instantSchema,
  cert_status: z.enum(['none', 'pending', 'valid', 'renewing', 'expired', 'failed']),
  cert_serial: z.string().nullable(),
  order: z
    .object({
      order_id: z.string(),
      status: orderStatusSchema,
      attempts: z.number().int(),
      error: z.string().nullable(),
      problem: z.unknown(),
      updated_at: instantSchema,
    })
    .nullable(),
});
