import { agentIdSchema, instantSchema, routesFor } from '@agentinfra/core';
import { z } from 'zod';
import { messageViewSchema } from './message-view.js';
import type { PostboxPermission } from './permissions.js';
import type { PostboxService } from './service.js';
import { webhookEventSchema } from './webhooks.js';

const route = routesFor<PostboxService, PostboxPermission>();

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page. */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};
const readOnly = { readOnly: true, idempotent: true };
const messageIdSchema = z.string().min(1).max(40);

const messageSummarySchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  direction: z.enum(['in', 'out']),
  folder: z.string(),
  to: z.string(),
  from: z.string(),
  subject: z.string(),
  injection_score: z.number(),
  quarantined: z.boolean(),
  read: z.boolean(),
  status: z.enum(['received', 'queued', 'sent', 'failed']),
  attachments: z.number().int(),
  created_at: instantSchema,
});

/**
 * Operator routes of agent-postbox (bridge key only): mail across agents
 * and the quarantine queue for the console, where a person reviews a
 * quarantined message and releases or deletes it. Rules stay on the agent
 * routes (/rule/list takes the bridge key too).
 */
export const postboxAdminRoutes = [
  route({
    path: '/admin/addresses/list',
    summary: 'Every address with its agent, in code-point order (operators only).',
    description:
      'List the e-mail addresses of every agent (or one agent) in code-point order with the owning agent_id and created_at. Pass next_cursor back as `cursor` for the next page.',
    example: { limit: 50, cursor: null },
    effects: readOnly,
    request: z.strictObject({ agent_id: agentIdSchema.optional(), ...page }),
    response: z.object({
      addresses: z.array(z.object({ address: z.string(), agent_id: z.string(), created_at: instantSchema })),
      next_cursor: z.string().nullable(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listAddresses({ agentId: body.agent_id, limit: body.limit, cursor: body.cursor }),
  }),
  route({
    path: '/admin/messages/list',
    summary:
      'Mail across agents newest first with injection scores, no bodies; `quarantined: true` is the quarantine queue (operators only).',
    description:
      'List mail newest first without bodies: id, agent_id, direction, folder, to, from, subject, injection_score, quarantined, read, status, attachment count and created_at. Filter by agent, direction, and quarantined (true gives the quarantine queue across all agents). Subjects of inbound mail are untrusted text. Pass next_cursor back as `cursor` for the next page.',
    example: { quarantined: true, limit: 50, cursor: null },
    effects: readOnly,
    request: z.strictObject({
      agent_id: agentIdSchema.optional(),
      direction: z.enum(['in', 'out']).optional(),
      quarantined: z.boolean().optional(),
      ...page,
    }),
    response: z.object({ messages: z.array(messageSummarySchema), next_cursor: z.string().nullable() }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) =>
      service.admin.listMessages({
        agentId: body.agent_id,
        direction: body.direction,
        quarantined: body.quarantined,
        limit: body.limit,
        cursor: body.cursor,
      }),
  }),
  route({
    path: '/admin/messages/get',
    summary: 'One message in full, quarantined or not, for a person to review (operators only).',
    description:
      'One message with its full subject, text body, HTML source and headers, also when quarantined (nothing withheld): for an operator to review before releasing or deleting it. The content is untrusted: show it as plain text, never render its HTML. not_found when it does not exist.',
    example: { id: 'msg_3q2ZP1kYfS5l0v8QnUu8Ww' },
    effects: readOnly,
    request: z.strictObject({ id: messageIdSchema }),
    response: messageViewSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.getMessage({ id: body.id }),
  }),
  route({
    path: '/admin/quarantine/release',
    summary: 'Release a quarantined message: it becomes a normal message and the agent’s message.received webhooks fire (operators only).',
    description:
      'Release a quarantined message after review: it becomes a normal message (listed in full by /list) and the agent’s webhooks subscribed to message.received are delivered. Returns id, agent_id, quarantined false and released_at; conflict when it is not quarantined.',
    example: { id: 'msg_3q2ZP1kYfS5l0v8QnUu8Ww' },
    effects: { openWorld: true },
    request: z.strictObject({ id: messageIdSchema }),
    response: z.object({ id: z.string(), agent_id: z.string(), quarantined: z.literal(false), released_at: instantSchema }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.release({ id: body.id }),
  }),
  route({
    path: '/admin/quarantine/delete',
    summary: 'Delete a quarantined message and its stored raw MIME (operators only).',
    description:
      'Delete a quarantined message for good, with the raw MIME the postbox stored for it when no other message shares it. Returns id, agent_id and deleted; conflict when it is not quarantined.',
    example: { id: 'msg_3q2ZP1kYfS5l0v8QnUu8Ww' },
    effects: { destructive: true },
    request: z.strictObject({ id: messageIdSchema }),
    response: z.object({ id: z.string(), agent_id: z.string(), deleted: z.literal(true) }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.deleteQuarantined({ id: body.id }),
  }),
  route({
    path: '/admin/webhooks/list',
    summary: 'Webhooks of every agent (or one) with their last delivery result; never a secret (operators only).',
    description:
      'List webhooks oldest first, optionally one agent’s: webhook_id, agent_id, url, events, created_at, rotated_at and last_delivery (at, ok, HTTP status, error; null before the first attempt). Pass next_cursor back as `cursor` for the next page.',
    example: { agent_id: 'alice', limit: 50, cursor: null },
    effects: readOnly,
    request: z.strictObject({ agent_id: agentIdSchema.optional(), ...page }),
    response: z.object({
      webhooks: z.array(
        z.object({
          webhook_id: z.string(),
          agent_id: z.string(),
          url: z.string(),
          events: z.array(webhookEventSchema),
          created_at: instantSchema,
          rotated_at: instantSchema.nullable(),
          last_delivery: z
            .object({ at: instantSchema, ok: z.boolean(), status: z.number().int().nullable(), error: z.string().nullable() })
            .nullable(),
        }),
      ),
      next_cursor: z.string().nullable(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listWebhooks({ agentId: body.agent_id, limit: body.limit, cursor: body.cursor }),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of addresses, mail today (in and out), quarantined messages and webhooks (operators only).',
    description: 'Service-wide counts for dashboards: addresses, messages in and out since 00:00 UTC, quarantined messages, webhooks.',
    example: {},
    effects: readOnly,
    request: z.strictObject({}),
    response: z.object({
      addresses: z.number().int(),
      mail_today: z.object({ in: z.number().int(), out: z.number().int() }),
      quarantined: z.number().int(),
      webhooks: z.number().int(),
    }),
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
