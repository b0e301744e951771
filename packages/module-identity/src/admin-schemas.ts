import { agentIdSchema, auditEventSchema, instantSchema, timestampSchema } from '@agentinfra/core';
import { z } from 'zod';

/**
 * Request and response bodies of agent-identity's operator routes (bridge
 * key only): `/admin/*`, the listings across agents the console shows, and
 * `/audit/list`. The admin queries take and return these shapes.
 */

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page (default null: the first page). */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};

/** A device's or delegation's state as operators see it. */
export const credentialStateSchema = z.enum(['active', 'expired', 'revoked']);
export type CredentialState = z.output<typeof credentialStateSchema>;

/** POST /admin/agents/list: `query` (at most 128 characters) keeps agents whose id or display name contains it; one page. */
export const adminListAgentsRequestSchema = z.strictObject({ query: z.string().max(128).optional(), ...page });
export type AdminListAgentsRequest = z.output<typeof adminListAgentsRequestSchema>;
/** A page of agents in id order with their active device counts; `next_cursor` is null on the last page. */
export const adminListAgentsResponseSchema = z.object({
  agents: z.array(
    z.object({ agent_id: z.string(), display_name: z.string(), created_at: instantSchema, active_devices: z.number().int() }),
  ),
  next_cursor: z.string().nullable(),
});
export type AdminListAgentsResponse = z.output<typeof adminListAgentsResponseSchema>;

/** POST /admin/agents/get: one agent. */
export const adminGetAgentRequestSchema = z.strictObject({ agent_id: agentIdSchema });
export type AdminGetAgentRequest = z.output<typeof adminGetAgentRequestSchema>;
/** The agent with its teams and counts of active devices, active delegations (from or to it) and secrets. */
export const adminGetAgentResponseSchema = z.object({
  agent_id: z.string(),
  display_name: z.string(),
  created_at: instantSchema,
  teams: z.array(z.string()),
  active_devices: z.number().int(),
  active_delegations: z.number().int(),
  secrets: z.number().int(),
});
export type AdminGetAgentResponse = z.output<typeof adminGetAgentResponseSchema>;

/** POST /admin/devices/list and /admin/delegations/list: one page of one agent's devices or delegations. */
export const adminAgentPageRequestSchema = z.strictObject({ agent_id: agentIdSchema, ...page });
export type AdminAgentPageRequest = z.output<typeof adminAgentPageRequestSchema>;
/** A page of the agent's devices, newest first, with their state (never a key). */
export const adminListDevicesResponseSchema = z.object({
  devices: z.array(
    z.object({
      device_id: z.string(),
      label: z.string(),
      created_at: instantSchema,
      expires_at: instantSchema,
      revoked_at: instantSchema.nullable(),
      state: credentialStateSchema,
    }),
  ),
  next_cursor: z.string().nullable(),
});
export type AdminListDevicesResponse = z.output<typeof adminListDevicesResponseSchema>;
/** A page of the delegations the agent gave or received, newest first, with their state (never a token). */
export const adminListDelegationsResponseSchema = z.object({
  delegations: z.array(
    z.object({
      delegation_id: z.string(),
      from_agent: z.string(),
      to_agent: z.string(),
      scope: z.array(z.string()),
      created_at: instantSchema,
      expires_at: instantSchema,
      revoked_at: instantSchema.nullable(),
      state: credentialStateSchema,
    }),
  ),
  next_cursor: z.string().nullable(),
});
export type AdminListDelegationsResponse = z.output<typeof adminListDelegationsResponseSchema>;

/** POST /admin/summary: no fields. */
export const adminSummaryRequestSchema = z.strictObject({});
export type AdminSummaryRequest = z.output<typeof adminSummaryRequestSchema>;
/** Service-wide counts: agents, active devices, active delegations. */
export const adminSummaryResponseSchema = z.object({
  agents: z.number().int(),
  active_devices: z.number().int(),
  active_delegations: z.number().int(),
});
export type AdminSummaryResponse = z.output<typeof adminSummaryResponseSchema>;

/** An audit action name such as `secret.get`: at most 64 characters, dot-separated lower-case words. */
const auditActionNameSchema = z
  .string()
  .max(64)
  .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, 'must be an action name such as secret.get');

/**
 * POST /audit/list: events an agent did or that concern it, of one action or
 * a list of 1–32, in `[since, until)`; one page (limit 1..500, default 50).
 */
export const auditListRequestSchema = z.strictObject({
  agent_id: agentIdSchema.optional(),
  action: z.union([auditActionNameSchema, z.array(auditActionNameSchema).min(1).max(32)]).optional(),
  since: timestampSchema.optional(),
  until: timestampSchema.optional(),
  ...page,
});
export type AuditListRequest = z.output<typeof auditListRequestSchema>;
/** A page of audit events, newest first, each with its chain hash; `next_cursor` is null on the last page. */
export const auditListResponseSchema = z.object({ events: z.array(auditEventSchema), next_cursor: z.string().nullable() });
export type AuditListResponse = z.output<typeof auditListResponseSchema>;
