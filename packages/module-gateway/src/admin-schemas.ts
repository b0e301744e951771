import { agentIdSchema } from '@agentinfra/core';
import { z } from 'zod';
import { hostViewSchema } from './host-view.js';

/**
 * Request and response bodies of agent-gateway's operator routes (bridge
 * key only, `/admin/*`): hosts page by page and counts, for the console.
 * The admin queries take and return these shapes.
 */

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page (default null: the first page). */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};

/**
 * POST /admin/hosts/list: optionally one agent's hosts, optionally only those
 * whose certificate expires (or expired) within `expiring_within_days`
 * (0..3650); one page.
 */
export const adminListHostsRequestSchema = z.strictObject({
  agent_id: agentIdSchema.optional(),
  expiring_within_days: z.number().int().min(0).max(3650).optional(),
  ...page,
});
export type AdminListHostsRequest = z.output<typeof adminListHostsRequestSchema>;
/** A page of bound hosts in name order, described as /list describes them; `next_cursor` is null on the last page. */
export const adminListHostsResponseSchema = z.object({ hosts: z.array(hostViewSchema), next_cursor: z.string().nullable() });
export type AdminListHostsResponse = z.output<typeof adminListHostsResponseSchema>;

/** POST /admin/summary: no fields. */
export const adminSummaryRequestSchema = z.strictObject({});
export type AdminSummaryRequest = z.output<typeof adminSummaryRequestSchema>;
/** Counts: bound hosts, hosts with a certificate, certificates expiring within `expiring_soon_days` (14), expired ones. */
export const adminSummaryResponseSchema = z.object({
  hosts: z.number().int(),
  certificates: z.number().int(),
  expiring_soon: z.number().int(),
  expired: z.number().int(),
  expiring_soon_days: z.number().int(),
});
export type AdminSummaryResponse = z.output<typeof adminSummaryResponseSchema>;
