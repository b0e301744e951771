import { agentIdSchema, instantSchema } from '@agentinfra/core';
import { z } from 'zod';
import { aclSchema } from './acl.js';
import { endpointSchema } from './endpoint.js';
import { wireguardKeySchema } from './wireguard-key.js';

/**
 * Request and response bodies of agent-mesh (SPEC.md §4 agent-mesh,
 * CONTRACT.md response shapes). The service takes and returns these shapes,
 * so HTTP and library callers see the same thing. Field schemas live in
 * `acl.ts`, `endpoint.ts` and `wireguard-key.ts`.
 *
 * `agent_id` is optional on the wire: a device key or delegation acts for its
 * own agent. The kernel resolves it before the service runs, so the service
 * takes {@link ActingAgent} of those requests, with `agent_id` always set.
 */

/** A request whose `agent_id` was resolved from the credential: always set. */
export type ActingAgent<T extends { agent_id?: string | undefined }> = Omit<T, 'agent_id'> & { agent_id: string };

/** POST /peer/register: the agent's WireGuard public key (base64) and `<host>:<port>` endpoint. */
export const registerPeerRequestSchema = z.strictObject({
  agent_id: agentIdSchema.optional(),
  pubkey: wireguardKeySchema,
  endpoint: endpointSchema,
});
export type RegisterPeerRequest = z.output<typeof registerPeerRequestSchema>;
/** The peer's mesh address and its first registration time. */
export const registerPeerResponseSchema = z.object({ agent_id: z.string(), address: z.string(), registered_at: instantSchema });
export type RegisterPeerResponse = z.output<typeof registerPeerResponseSchema>;

/** POST /peer/heartbeat, /netmap and /wg_config: only the agent, optional with a device key. */
export const agentOnlyRequestSchema = z.strictObject({ agent_id: agentIdSchema.optional() });
export type AgentOnlyRequest = z.output<typeof agentOnlyRequestSchema>;
/** When the peer was last seen (now). */
export const heartbeatResponseSchema = z.object({ agent_id: z.string(), last_seen: instantSchema });
export type HeartbeatResponse = z.output<typeof heartbeatResponseSchema>;

/** POST /acl/put and /acl/revoke: `from_agent` may reach `to_agent` on `port`/`proto` (see `acl.ts`). */
export const aclRequestSchema = aclSchema;
export type AclRequest = z.output<typeof aclRequestSchema>;
/** An ACL as /acl/put and /netmap show it. */
export const aclViewSchema = z.object({ from_agent: z.string(), to_agent: z.string(), port: z.number().int(), proto: z.string() });
export type AclView = z.output<typeof aclViewSchema>;
/** How many ACLs /acl/revoke removed: the named one (1 or 0), or every ACL of the pair when `from_agent` revokes for itself. */
export const revokeAclResponseSchema = z.object({ revoked: z.number().int() });
export type RevokeAclResponse = z.output<typeof revokeAclResponseSchema>;

/** POST /acl/accept (an addition): `from_agent` lets `to_agent` put ACLs toward it again, ending its refusal. */
export const acceptPeerRequestSchema = z
  .strictObject({ from_agent: agentIdSchema, to_agent: agentIdSchema })
  .refine((pair) => pair.from_agent !== pair.to_agent, { path: ['to_agent'], message: 'must differ from from_agent' });
export type AcceptPeerRequest = z.output<typeof acceptPeerRequestSchema>;
/** How many refusals /acl/accept ended: 1 when `from_agent` refused `to_agent`, else 0. */
export const acceptPeerResponseSchema = z.object({ from_agent: z.string(), to_agent: z.string(), lifted: z.number().int() });
export type AcceptPeerResponse = z.output<typeof acceptPeerResponseSchema>;

/** The caller's own peer as /netmap shows it (`self`): `online` when seen within the configured window. */
export const ownPeerViewSchema = z.object({
  agent_id: z.string(),
  address: z.string(),
  pubkey: z.string(),
  endpoint: z.string(),
  online: z.boolean(),
  last_seen: instantSchema,
});
export type OwnPeerView = z.output<typeof ownPeerViewSchema>;
/**
 * Another peer as /netmap shows it. For a peer the caller may not reach,
 * `endpoint`, `online` and `last_seen` are `null`: it only connects to the
 * caller (which learns its endpoint from the handshake), and it never agreed
 * to show its presence, since the ACLs that bring it in were put by the
 * caller or the operator. `endpoint` is also `null` when the stored one is no
 * longer valid.
 */
export const peerViewSchema = ownPeerViewSchema.extend({
  endpoint: z.string().nullable(),
  online: z.boolean().nullable(),
  last_seen: instantSchema.nullable(),
});
export type PeerView = z.output<typeof peerViewSchema>;
/** The agent's own peer (`null` before it registers), the peers it may reach or that may reach it, and its ACLs. */
export const netmapResponseSchema = z.object({
  self: ownPeerViewSchema.nullable(),
  peers: z.array(peerViewSchema),
  acls: z.array(aclViewSchema),
});
export type NetmapResponse = z.output<typeof netmapResponseSchema>;

/** The wg-quick configuration text, with the pairwise PSKs (secret). */
export const wgConfigResponseSchema = z.object({ config: z.string() });
export type WgConfigResponse = z.output<typeof wgConfigResponseSchema>;

/** POST /psk/rotate: the pair (a, b), two different agents. */
export const rotatePskRequestSchema = z
  .strictObject({ a: agentIdSchema, b: agentIdSchema })
  .refine((body) => body.a !== body.b, { path: ['b'], message: 'must differ from a' });
export type RotatePskRequest = z.output<typeof rotatePskRequestSchema>;
/** The pair and when its PSK was replaced (never the key). */
export const rotatePskResponseSchema = z.object({ a: z.string(), b: z.string(), rotated_at: instantSchema });
export type RotatePskResponse = z.output<typeof rotatePskResponseSchema>;
