import { routesFor } from '@agentinfra/core';
import { auditListRequestSchema, auditListResponseSchema } from './admin-schemas.js';
import type { IdentityPermission } from './permissions.js';
import type { IdentityService } from './service.js';

const route = routesFor<IdentityService, IdentityPermission>();

/** The audit log's operator route (bridge key only). */
export const identityAuditRoutes = [
  route({
    path: '/audit/list',
    summary: 'List audit events (security events), newest first (operators only).',
    description:
      'List the tamper-evident audit log newest first: agents created, device keys issued and revoked, delegations, secrets written and read (key names, never values), settings changed, webhooks registered and rotated, hosts claimed and released, certificates issued, every use of the bridge key, and refused authentications tallied per client address. Filter by agent (events it did or that concern it), by action (one name or a list), and by time (`since` inclusive, `until` exclusive). Pass next_cursor back as `cursor` for the next page (null on the last). Each event carries its chain hash.',
    example: { agent_id: 'alice', action: ['secret.get', 'secret.put'], limit: 50, cursor: null },
    effects: { readOnly: true, idempotent: true },
    request: auditListRequestSchema,
    response: auditListResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listAuditEvents(body),
  }),
];
