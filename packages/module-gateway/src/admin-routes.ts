import { routesFor } from '@agentinfra/core';
import {
  adminListHostsRequestSchema,
  adminListHostsResponseSchema,
  adminSummaryRequestSchema,
  adminSummaryResponseSchema,
} from './admin-schemas.js';
import type { GatewayPermission } from './permissions.js';
import type { GatewayService } from './service.js';

const route = routesFor<GatewayService, GatewayPermission>();

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
    request: adminListHostsRequestSchema,
    response: adminListHostsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listHosts(body),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of hosts, certificates, certificates expiring within 14 days and expired ones (operators only).',
    description:
      'Service-wide counts for dashboards: bound hosts, hosts with a certificate, certificates expiring within 14 days, expired.',
    example: {},
    effects: readOnly,
    request: adminSummaryRequestSchema,
    response: adminSummaryResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
