import { routesFor } from '@agentinfra/core';
import {
  adminAgentPageRequestSchema,
  adminDeleteQuarantinedResponseSchema,
  adminGetMessageResponseSchema,
  adminListAddressesResponseSchema,
  adminListMessagesRequestSchema,
  adminListMessagesResponseSchema,
  adminListWebhooksResponseSchema,
  adminMessageRequestSchema,
  adminRedeliverRequestSchema,
  adminRedeliverResponseSchema,
  adminReleaseResponseSchema,
  adminSummaryRequestSchema,
  adminSummaryResponseSchema,
} from './admin-schemas.js';
import type { PostboxPermission } from './permissions.js';
import type { PostboxService } from './service.js';

const route = routesFor<PostboxService, PostboxPermission>();

const readOnly = { readOnly: true, idempotent: true };

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
    request: adminAgentPageRequestSchema,
    response: adminListAddressesResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listAddresses(body),
  }),
  route({
    path: '/admin/messages/list',
    summary:
      'Mail across agents newest first with injection scores, no bodies; `quarantined: true` is the quarantine queue (operators only).',
    description:
      'List mail newest first without bodies: id, agent_id, direction, folder, to, from, subject, injection_score, quarantined, read, status, attachment count and created_at. Filter by agent, direction, and quarantined (true gives the quarantine queue across all agents). Subjects of inbound mail are untrusted text. Pass next_cursor back as `cursor` for the next page.',
    example: { quarantined: true, limit: 50, cursor: null },
    effects: readOnly,
    request: adminListMessagesRequestSchema,
    response: adminListMessagesResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listMessages(body),
  }),
  route({
    path: '/admin/messages/get',
    summary: 'One message in full, quarantined or not, for a person to review (operators only).',
    description:
      'One message with its full subject, text body, HTML source and headers, also when quarantined (nothing withheld): for an operator to review before releasing or deleting it. The content is untrusted: show it as plain text, never render its HTML. not_found when it does not exist.',
    example: { id: 'msg_3q2ZP1kYfS5l0v8QnUu8Ww' },
    effects: readOnly,
    request: adminMessageRequestSchema,
    response: adminGetMessageResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.getMessage(body),
  }),
  route({
    path: '/admin/quarantine/release',
    summary: 'Release a quarantined message: it becomes a normal message and the agent’s message.received webhooks fire (operators only).',
    description:
      'Release a quarantined message after review: it becomes a normal message (listed in full by /list) and the agent’s webhooks subscribed to message.received are delivered. Returns id, agent_id, quarantined false and released_at; conflict when it is not quarantined.',
    example: { id: 'msg_3q2ZP1kYfS5l0v8QnUu8Ww' },
    effects: { openWorld: true },
    request: adminMessageRequestSchema,
    response: adminReleaseResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.release(body),
  }),
  route({
    path: '/admin/quarantine/delete',
    summary: 'Delete a quarantined message and its stored raw MIME (operators only).',
    description:
      'Delete a quarantined message for good, with the raw MIME the postbox stored for it when no other message shares it. Returns id, agent_id and deleted; conflict when it is not quarantined.',
    example: { id: 'msg_3q2ZP1kYfS5l0v8QnUu8Ww' },
    effects: { destructive: true },
    request: adminMessageRequestSchema,
    response: adminDeleteQuarantinedResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.deleteQuarantined(body),
  }),
  route({
    path: '/admin/webhooks/list',
    summary: 'Webhooks of every agent (or one) with their last delivery result; never a secret (operators only).',
    description:
      'List webhooks oldest first, optionally one agent’s: webhook_id, agent_id, url, events, created_at, rotated_at and last_delivery (at, ok, HTTP status, error; null before the first attempt). Pass next_cursor back as `cursor` for the next page.',
    example: { agent_id: 'alice', limit: 50, cursor: null },
    effects: readOnly,
    request: adminAgentPageRequestSchema,
    response: adminListWebhooksResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listWebhooks(body),
  }),
  route({
    path: '/admin/webhooks/redeliver',
    summary: 'Send a webhook’s failed deliveries again, e.g. after its receiver was fixed (operators only).',
    description:
      'Put every delivery of the webhook whose attempts all failed (kept 30 days) back in the queue, due now, with a fresh count of attempts and back-off; each keeps its webhook-id, so a receiver that got it after all drops the duplicate. Deliveries still retrying are left alone. Returns webhook_id, agent_id and requeued (how many went back; 0 when none had failed); not_found when the webhook does not exist.',
    example: { webhook_id: 'whk_9fJd0aQx2LkP7sVb3nYt1w' },
    effects: { openWorld: true, idempotent: true },
    request: adminRedeliverRequestSchema,
    response: adminRedeliverResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.redeliverWebhook(body),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of addresses, mail today (in and out), quarantined messages and webhooks (operators only).',
    description: 'Service-wide counts for dashboards: addresses, messages in and out since 00:00 UTC, quarantined messages, webhooks.',
    example: {},
    effects: readOnly,
    request: adminSummaryRequestSchema,
    response: adminSummaryResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
