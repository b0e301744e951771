import { routesFor } from '@agentinfra/core';
import {
  adminListAclsRequestSchema,
  adminListAclsResponseSchema,
  adminListPeersRequestSchema,
  adminListPeersResponseSchema,
  adminListRefusalsRequestSchema,
  adminListRefusalsResponseSchema,
  adminSummaryRequestSchema,
  adminSummaryResponseSchema,
} from './admin-schemas.js';
import type { MeshPermission } from './permissions.js';
import type { MeshService } from './service.js';

const route = routesFor<MeshService, MeshPermission>();

const readOnly = { readOnly: true, idempotent: true };

/**
 * Operator routes of agent-mesh (bridge key only): the whole mesh for the
 * console. Changing ACLs, lifting refusals and rotating PSKs stay on
 * /acl/put, /acl/revoke, /acl/accept and /psk/rotate, which take the bridge
 * key too.
 */
export const meshAdminRoutes = [
  route({
    path: '/admin/peers/list',
    summary: 'Every mesh peer in agent id order with address, endpoint, online state and last seen (operators only).',
    description:
      'List every registered mesh peer in agent id order: agent_id, mesh address, public key, endpoint, online (seen within the online window), registered_at and last_seen. Pass next_cursor back as `cursor` for the next page.',
    example: { limit: 50, cursor: null },
    effects: readOnly,
    request: adminListPeersRequestSchema,
    response: adminListPeersResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listPeers(body),
  }),
  route({
    path: '/admin/acls/list',
    summary: 'Every ACL (or one agent’s) with when its pair’s PSK last rotated (operators only).',
    description:
      'List the mesh’s access rules in (from_agent, to_agent, proto, port) order, optionally those involving one agent, each with created_at and psk_rotated_at (the pair’s last PSK rotation, null before the pair’s first /wg_config; never the key). Pass next_cursor back as `cursor` for the next page.',
    example: { agent_id: 'alice', limit: 50, cursor: null },
    effects: readOnly,
    request: adminListAclsRequestSchema,
    response: adminListAclsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listAcls(body),
  }),
  route({
    path: '/admin/refusals/list',
    summary: 'Every refusal: an agent that removed another’s ACL and keeps its peer out (operators only).',
    description:
      'List the mesh’s refusals in (refuser, refused) order with created_at: refuser removed an ACL that put refused’s peer into its configuration, so refused cannot put an ACL toward it again until /acl/accept (by refuser or the bridge key). Pass next_cursor back as `cursor` for the next page.',
    example: { limit: 50, cursor: null },
    effects: readOnly,
    request: adminListRefusalsRequestSchema,
    response: adminListRefusalsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listRefusals(body),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of peers, peers online and ACLs (operators only).',
    description: 'Service-wide counts for dashboards: registered peers, peers online now, ACLs.',
    example: {},
    effects: readOnly,
    request: adminSummaryRequestSchema,
    response: adminSummaryResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
