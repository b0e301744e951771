import { agentIdSchema, auditEventSchema, routesFor, timestampSchema } from '@agentinfra/core';
import { z } from 'zod';
import type { IdentityPermission } from './permissions.js';
import type { IdentityService } from './service.js';

const route = routesFor<IdentityService, IdentityPermission>();
const actionName = z
  .string()
  .max(64)
  .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, 'must be an action name such as secret.get');

/** The audit log's operator route (bridge key only). */
export const identityAuditRoutes = [
  route({
    path: '/audit/list',
    summary: 'List audit events (security events), newest first (operators only).',
    description:
      'List the tamper-evident audit log newest first: agents created, device keys issued and revoked, delegations, secrets written and read (key names, never values), settings changed, webhooks registered and rotated, hosts claimed and released, certificates issued, every use of the bridge key, and refused authentications tallied per client address. Filter by agent (events it did or that concern it), by action (one name or a list), and by time (`since` inclusive, `until` exclusive). Pass next_cursor back as `cursor` for the next page (null on the last). Each event carries its chain hash.',
    example: { agent_id: 'alice', action: ['secret.get', 'secret.put'], limit: 50, cursor: null },
    effects: { readOnly: true, idempotent: true },
    request: z.strictObject({
      agent_id: agentIdSchema.optional(),
      action: z.union([actionName, z.array(actionName).min(1).max(32)]).optional(),
      since: timestampSchema.optional(),
      until: timestampSchema.optional(),
      limit: z.number().int().min(1).max(500).default(50),
      cursor: z.string().max(512).nullable().default(null),
    }),
    response: z.object({ events: z.array(auditEventSchema), next_cursor: z.string().nullable() }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) =>
      service.audit.list({
        agentId: body.agent_id,
        actions: body.action === undefined ? undefined : typeof body.action === 'string' ? [body.action] : body.action,
        since: body.since,
        until: body.until,
        limit: body.limit,
        cursor: body.cursor,
      }),
  }),
];
