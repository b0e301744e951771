import { InputError, type Principal, routesFor } from '@agentinfra/core';
import { accepts } from 'hono/accepts';
import type { MeshPermission } from './permissions.js';
import {
  acceptPeerRequestSchema,
  acceptPeerResponseSchema,
  aclRequestSchema,
  aclViewSchema,
  agentOnlyRequestSchema,
  heartbeatResponseSchema,
  netmapResponseSchema,
  registerPeerRequestSchema,
  registerPeerResponseSchema,
  revokeAclResponseSchema,
  rotatePskRequestSchema,
  rotatePskResponseSchema,
  wgConfigResponseSchema,
} from './schemas.js';
import type { MeshService } from './service.js';

const route = routesFor<MeshService, MeshPermission>();

/**
 * The agent a call acts for: with the bridge key, `agent_id` from the
 * payload; with a device key or delegation, `agent_id` when given (another
 * agent's id is refused with 403), else the credential's own agent.
 */
const actingAgent = (body: { agent_id?: string | undefined }, principal: Principal) => [
  principal.kind === 'bridge' ? body.agent_id : (body.agent_id ?? principal.agentId),
];

/** The agent id the kernel resolved; empty only for the bridge key without `agent_id`. */
function requireAgent(agentId: string): string {
  if (agentId === '') {
    throw new InputError('agent_id is required with the bridge key.', {
      fields: [{ path: 'agent_id', message: 'required with the bridge key' }],
    });
  }
  return agentId;
}

/** The agent an ACL call acts as (refusals are an agent's own), `null` for the bridge key; `principal` is set on every `agent` route. */
const actorOf = (principal: Principal | null): string | null =>
  principal === null || principal.kind === 'bridge' ? null : principal.agentId;

/** agent-mesh routes (SPEC.md §4 agent-mesh, CONTRACT.md response shapes). */
export const meshRoutes = [
  route({
    path: '/peer/register',
    summary: 'Register or update an agent’s WireGuard public key and endpoint; the mesh address is allocated once.',
    description:
      'Register or update the agent’s WireGuard public key and endpoint (host:port) in the mesh; the agent’s mesh address is allocated on first registration and kept. Returns agent_id, address and registered_at.',
    effects: { destructive: true, idempotent: true },
    request: registerPeerRequestSchema,
    response: registerPeerResponseSchema,
    auth: { kind: 'agent', permission: 'mesh.write', agents: actingAgent },
    handler: ({ body, agentId, service }) => service.registerPeer({ ...body, agent_id: requireAgent(agentId) }),
  }),
  route({
    path: '/peer/heartbeat',
    summary: 'Bump the peer’s last_seen; it shows online in /netmap within the online window.',
    description: 'Mark the agent’s peer online now (bumps last_seen); hosts call it periodically. Returns agent_id and last_seen.',
    effects: { idempotent: true },
    request: agentOnlyRequestSchema,
    response: heartbeatResponseSchema,
    auth: { kind: 'agent', permission: 'mesh.write', agents: actingAgent },
    handler: ({ body, agentId, service }) => service.heartbeat({ ...body, agent_id: requireAgent(agentId) }),
  }),
  route({
    path: '/acl/put',
    summary: 'Let from_agent reach to_agent on port/proto (authorised by to_agent or the bridge key). Idempotent.',
    description:
      'Allow from_agent to reach to_agent on a port and protocol (authorised by to_agent). Returns the ACL. Answers 409 while from_agent refuses to_agent (from_agent removed such an ACL itself) until from_agent calls acl/accept; the operator putting the ACL also ends the refusal. A pair holds at most 256 rules by default (config mesh.maxAclsPerPair); a new rule beyond that answers 409 and stores nothing.',
    effects: { idempotent: true },
    request: aclRequestSchema,
    response: aclViewSchema,
    auth: { kind: 'agent', permission: 'mesh.write', agents: (body) => [body.to_agent] },
    handler: ({ body, principal, service }) => service.putAcl(body, actorOf(principal)),
  }),
  route({
    path: '/acl/revoke',
    summary: 'Remove an ACL (authorised by to_agent, by from_agent, or the bridge key). Idempotent.',
    description:
      'Remove an access rule so from_agent can no longer reach to_agent on that port and protocol. Either side may remove it: to_agent (or the bridge key) withdraws the one rule named; from_agent refuses a peer it did not ask for in its WireGuard configuration, so every rule from_agent→to_agent goes, whatever port and protocol are named, and to_agent’s peer leaves from_agent’s netmap and wg_config (to_agent cannot then put an ACL toward from_agent again until from_agent calls acl/accept). When no rule links the pair any more, in either direction, its PresharedKey is deleted too, so linking the pair again later gives it a new one. Returns how many rules were removed.',
    effects: { destructive: true, idempotent: true },
    request: aclRequestSchema,
    response: revokeAclResponseSchema,
    // from_agent too: an ACL puts to_agent's peer (and its endpoint) into from_agent's configuration, so from_agent may refuse it.
    auth: { kind: 'agent', permission: 'mesh.write', agents: (body) => [body.to_agent, body.from_agent] },
    handler: ({ body, principal, service }) => service.revokeAcl(body, actorOf(principal)),
  }),
  route({
    path: '/acl/accept',
    summary:
      'End from_agent’s refusal of to_agent, so to_agent may put ACLs toward it again (authorised by from_agent or the bridge key). Idempotent.',
    description:
      'Let to_agent grant from_agent access again after from_agent removed one of its ACLs (which refuses to_agent’s peer). Puts no ACL itself. Returns lifted: 1 when there was a refusal, else 0.',
    effects: { idempotent: true },
    request: acceptPeerRequestSchema,
    response: acceptPeerResponseSchema,
    auth: { kind: 'agent', permission: 'mesh.write', agents: (body) => [body.from_agent] },
    handler: ({ body, service }) => service.acceptPeer(body),
  }),
  route({
    path: '/netmap',
    summary: 'The caller’s own peer, the peers it may reach or that may reach it, and the ACLs that involve it.',
    description:
      'The agent’s own mesh peer, the peers it may reach or that may reach it, and the ACLs that involve it. Endpoint, online status and last_seen are shown only for peers the agent may reach (which opened a port to it); they are null for a peer that may only reach the agent, which never agreed to share them.',
    effects: { readOnly: true, idempotent: true },
    request: agentOnlyRequestSchema,
    response: netmapResponseSchema,
    auth: { kind: 'agent', permission: 'mesh.read', agents: actingAgent },
    handler: ({ body, agentId, service }) => service.netmap({ ...body, agent_id: requireAgent(agentId) }),
  }),
  route({
    path: '/wg_config',
    summary: 'The caller’s wg-quick configuration with PSKs: { config }, or the text itself with Accept: text/plain.',
    description:
      'The agent’s ready-to-use wg-quick configuration, including the pairwise pre-shared keys (secret: write it to the host, do not repeat it). Returns { config }.',
    effects: { readOnly: true, idempotent: true },
    request: agentOnlyRequestSchema,
    response: wgConfigResponseSchema,
    alternateMedia: { 'text/plain': 'the wg-quick configuration itself, to write to a .conf file.' },
    auth: { kind: 'agent', permission: 'mesh.read', agents: actingAgent },
    handler: async ({ body, agentId, service, c }) => {
      const result = await service.wgConfig({ ...body, agent_id: requireAgent(agentId) });
      const type = accepts(c, { header: 'Accept', supports: ['application/json', 'text/plain'], default: 'application/json' });
      if (type !== 'text/plain') return result;
      return new Response(result.config, {
        status: 200,
        headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
      });
    },
  }),
  route({
    path: '/psk/rotate',
    summary: 'Replace the pre-shared key of the pair (a, b); both re-fetch /wg_config. Never returns the key.',
    description:
      'Replace the pre-shared key of the pair (a, b); both agents must re-fetch /wg_config afterwards. Never returns the key. Returns a, b and rotated_at. Answers 404 and creates nothing unless an ACL links a and b (in either direction), with the same message whether or not the other agent is on the mesh.',
    effects: { destructive: true },
    request: rotatePskRequestSchema,
    response: rotatePskResponseSchema,
    auth: { kind: 'agent', permission: 'mesh.write', agents: (body) => [body.a, body.b] },
    handler: ({ body, service }) => service.rotatePsk(body),
  }),
];
