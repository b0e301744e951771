import { agentIdSchema, instantSchema } from '@agentinfra/core';
import { z } from 'zod';
import { messageViewSchema } from './message-view.js';
import { webhookIdSchema, webhookViewSchema } from './schemas.js';

/**
 * Request and response bodies of agent-postbox's operator routes (bridge key
 * only, `/admin/*`): mail across agents and the quarantine queue for the
 * console, where a person reviews a quarantined message and releases or
 * deletes it. The admin queries take and return these shapes.
 */

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page (default null: the first page). */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};

/** POST /admin/addresses/list and /admin/webhooks/list: optionally one agent's; one page. */
export const adminAgentPageRequestSchema = z.strictObject({ agent_id: agentIdSchema.optional(), ...page });
export type AdminAgentPageRequest = z.output<typeof adminAgentPageRequestSchema>;
/** A page of addresses in code-point order with their agents; `next_cursor` is null on the last page. */
export const adminListAddressesResponseSchema = z.object({
  addresses: z.array(z.object({ address: z.string(), agent_id: z.string(), created_at: instantSchema })),
  next_cursor: z.string().nullable(),
});
export type AdminListAddressesResponse = z.output<typeof adminListAddressesResponseSchema>;

/** POST /admin/messages/list: optionally one agent's mail, of one direction, only quarantined or only not; one page. */
export const adminListMessagesRequestSchema = z.strictObject({
  agent_id: agentIdSchema.optional(),
  direction: z.enum(['in', 'out']).optional(),
  quarantined: z.boolean().optional(),
  ...page,
});
export type AdminListMessagesRequest = z.output<typeof adminListMessagesRequestSchema>;
/** A message as an operator listing shows it: no bodies, the number of attachments; the subject of inbound mail is untrusted. */
export const adminMessageSummarySchema = z.object({
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
export type AdminMessageSummary = z.output<typeof adminMessageSummarySchema>;
/** A page of messages, newest first; `next_cursor` is null on the last page. */
export const adminListMessagesResponseSchema = z.object({
  messages: z.array(adminMessageSummarySchema),
  next_cursor: z.string().nullable(),
});
export type AdminListMessagesResponse = z.output<typeof adminListMessagesResponseSchema>;

/** POST /admin/messages/get, /admin/quarantine/release and /admin/quarantine/delete: one message by id (1–40 characters). */
export const adminMessageRequestSchema = z.strictObject({ id: z.string().min(1).max(40) });
export type AdminMessageRequest = z.output<typeof adminMessageRequestSchema>;
/** The message in full (subject, text, HTML source, headers), quarantined or not; untrusted content. */
export const adminGetMessageResponseSchema = messageViewSchema;
export type AdminGetMessageResponse = z.output<typeof adminGetMessageResponseSchema>;
/** The released message, no longer quarantined. */
export const adminReleaseResponseSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  quarantined: z.literal(false),
  released_at: instantSchema,
});
export type AdminReleaseResponse = z.output<typeof adminReleaseResponseSchema>;
/** The deleted quarantined message. */
export const adminDeleteQuarantinedResponseSchema = z.object({ id: z.string(), agent_id: z.string(), deleted: z.literal(true) });
export type AdminDeleteQuarantinedResponse = z.output<typeof adminDeleteQuarantinedResponseSchema>;

/** A page of webhooks, oldest first, with their last delivery result (null before the first attempt; never a secret). */
export const adminListWebhooksResponseSchema = z.object({
  webhooks: z.array(
    webhookViewSchema.omit({ previous_expires_at: true }).extend({
      agent_id: z.string(),
      last_delivery: z
        .object({ at: instantSchema, ok: z.boolean(), status: z.number().int().nullable(), error: z.string().nullable() })
        .nullable(),
    }),
  ),
  next_cursor: z.string().nullable(),
});
export type AdminListWebhooksResponse = z.output<typeof adminListWebhooksResponseSchema>;

/** POST /admin/webhooks/redeliver: one webhook by id. */
export const adminRedeliverRequestSchema = z.strictObject({ webhook_id: webhookIdSchema });
export type AdminRedeliverRequest = z.output<typeof adminRedeliverRequestSchema>;
/** How many failed deliveries of the webhook went back to the queue. */
export const adminRedeliverResponseSchema = z.object({ webhook_id: z.string(), agent_id: z.string(), requeued: z.number().int() });
export type AdminRedeliverResponse = z.output<typeof adminRedeliverResponseSchema>;

/** POST /admin/summary: no fields. */
export const adminSummaryRequestSchema = z.strictObject({});
export type AdminSummaryRequest = z.output<typeof adminSummaryRequestSchema>;
/** Counts: addresses, mail in and out since 00:00 UTC today, quarantined messages, webhooks. */
export const adminSummaryResponseSchema = z.object({
  addresses: z.number().int(),
  mail_today: z.object({ in: z.number().int(), out: z.number().int() }),
  quarantined: z.number().int(),
  webhooks: z.number().int(),
});
export type AdminSummaryResponse = z.output<typeof adminSummaryResponseSchema>;
