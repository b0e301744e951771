import { agentIdSchema, routesFor } from '@agentinfra/core';
import { z } from 'zod';
import { hostViewSchema } from './host-view.js';
import type { GatewayPermission } from './permissions.js';
import type { GatewayService } from './service.js';

const route = routesFor<GatewayService, GatewayPermission>();

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page. */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};
const readOnly = { readOnly: true, idempotent: true };

/**
 * Operator routes of agent-gateway (bridge key only): hosts page by page
 * and counts, for the console. Renewing stays on /cert/renew.
 */
export const gatewayAdminRoutes = [
  route({
    path: '/admin/hosts/list',
    summary: 'Bound hosts page by page, optionally only those whose certificate expires within N days (operators only).',
    description:
      'Bound hosts in name order as /list describes them (certificate expiry, days_remaining, status, IPs, latest order), optionally one agent’s, optionally only those whose certificate expires (or expired) within expiring_within_days. Pass next_cursor back as `cursor` for the next page.',
    example: { expiring_within_days: 14, limit: 50, cursor: null },
    effects: readOnly,
    request: z.strictObject({
      agent_id: agentIdSchema.optional(),
      expiring_within_days: z.number().int().min(0).max(3650).optional(),
      ...page,
    }),
    response: z.object({ hosts: z.array(hostViewSchema), next_cursor: z.string().nullable() }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) =>
      service.admin.listHosts({
        agentId: body.agent_id,
        expiringWithinDays: body.expiring_within_days,
        limit: body.limit,
        cursor: body.cursor,
      }),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of hosts, certificates, certificates expiring within 14 days and expired ones (operators only).',
    description:
      'Service-wide counts for dashboards: bound hosts, hosts with a certificate, certificates expiring within 14 days, expired.',
    example: {},
    effects: readOnly,
    request: z.strictObject({}),
    response: z.object({
      hosts: z.number().int(),
      certificates: z.number().int(),
      expiring_soon: z.number().int(),
      expired: z.number().int(),
      expiring_soon_days: z.number().int(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
