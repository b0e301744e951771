import { agentIdSchema, instantSchema } from '@agentinfra/core';
import { z } from 'zod';
import { aclProtocols } from './acl.js';

/**
 * Request and response bodies of agent-mesh's operator routes (bridge key
 * only, `/admin/*`): the whole mesh for the console. The admin queries take
 * and return these shapes.
 */

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page (default null: the first page). */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};

/** POST /admin/peers/list: one page of every peer. */
export const adminListPeersRequestSchema = z.strictObject({ ...page });
export type AdminListPeersRequest = z.output<typeof adminListPeersRequestSchema>;
/**
 * A page of peers in agent id order; `online` when seen within the online
 * window, as in /netmap; `next_cursor` is null on the last page.
 */
export const adminListPeersResponseSchema = z.object({
  peers: z.array(
    z.object({
      agent_id: z.string(),
      address: z.string(),
      pubkey: z.string(),
      endpoint: z.string(),
      online: z.boolean(),
      registered_at: instantSchema,
      last_seen: instantSchema,
    }),
  ),
  next_cursor: z.string().nullable(),
});
export type AdminListPeersResponse = z.output<typeof adminListPeersResponseSchema>;

/** POST /admin/acls/list: optionally only the ACLs involving one agent; one page. */
export const adminListAclsRequestSchema = z.strictObject({ agent_id: agentIdSchema.optional(), ...page });
export type AdminListAclsRequest = z.output<typeof adminListAclsRequestSchema>;
/**
 * A page of ACLs in (from_agent, to_agent, proto, port) order, each with its
 * pair's last PSK rotation (null before the pair's first /wg_config; never the key).
 */
export const adminListAclsResponseSchema = z.object({
  acls: z.array(
    z.object({
      from_agent: z.string(),
      to_agent: z.string(),
      port: z.number().int(),
      proto: z.enum(aclProtocols),
      created_at: instantSchema,
      psk_rotated_at: instantSchema.nullable(),
    }),
  ),
  next_cursor: z.string().nullable(),
});
export type AdminListAclsResponse = z.output<typeof adminListAclsResponseSchema>;

/** POST /admin/refusals/list: one page of every refusal. */
export const adminListRefusalsRequestSchema = z.strictObject({ ...page });
export type AdminListRefusalsRequest = z.output<typeof adminListRefusalsRequestSchema>;
/**
 * A page of refusals in (refuser, refused) order: `refuser` removed an ACL
 * that put `refused`'s peer into its configuration, so `refused` cannot put
 * one toward it again until `refuser` (or the operator) calls /acl/accept.
 */
export const adminListRefusalsResponseSchema = z.object({
  refusals: z.array(z.object({ refuser: z.string(), refused: z.string(), created_at: instantSchema })),
  next_cursor: z.string().nullable(),
});
export type AdminListRefusalsResponse = z.output<typeof adminListRefusalsResponseSchema>;

/** POST /admin/summary: no fields. */
export const adminSummaryRequestSchema = z.strictObject({});
export type AdminSummaryRequest = z.output<typeof adminSummaryRequestSchema>;
/** Service-wide counts: registered peers, peers online now, ACLs. */
export const adminSummaryResponseSchema = z.object({ peers: z.number().int(), online: z.number().int(), acls: z.number().int() });
export type AdminSummaryResponse = z.output<typeof adminSummaryResponseSchema>;
