import { agentIdSchema, instantSchema, routesFor } from '@agentinfra/core';
import { z } from 'zod';
import { aclProtocols } from './acl.js';
import type { MeshPermission } from './permissions.js';
import type { MeshService } from './service.js';

const route = routesFor<MeshService, MeshPermission>();

/** Page size 1..500 (default 50) and the `next_cursor` of the previous page. */
const page = {
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().default(null),
};
const readOnly = { readOnly: true, idempotent: true };

/**
 * Operator routes of agent-mesh (bridge key only): the whole mesh for the
 * console. Changing ACLs and rotating PSKs stay on /acl/put, /acl/revoke
 * and /psk/rotate, which take the bridge key too.
 */
export const meshAdminRoutes = [
  route({
    path: '/admin/peers/list',
    summary: 'Every mesh peer in agent id order with address, endpoint, online state and last seen (operators only).',
    description:
      'List every registered mesh peer in agent id order: agent_id, mesh address, public key, endpoint, online (seen within the online window), registered_at and last_seen. Pass next_cursor back as `cursor` for the next page.',
    example: { limit: 50, cursor: null },
    effects: readOnly,
    request: z.strictObject({ ...page }),
    response: z.object({
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
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listPeers({ limit: body.limit, cursor: body.cursor }),
  }),
  route({
    path: '/admin/acls/list',
    summary: 'Every ACL (or one agent’s) with when its pair’s PSK last rotated (operators only).',
    description:
      'List the mesh’s access rules in (from_agent, to_agent, proto, port) order, optionally those involving one agent, each with created_at and psk_rotated_at (the pair’s last PSK rotation, null before the pair’s first /wg_config; never the key). Pass next_cursor back as `cursor` for the next page.',
    example: { agent_id: 'alice', limit: 50, cursor: null },
    effects: readOnly,
    request: z.strictObject({ agent_id: agentIdSchema.optional(), ...page }),
    response: z.object({
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
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.admin.listAcls({ agentId: body.agent_id, limit: body.limit, cursor: body.cursor }),
  }),
  route({
    path: '/admin/summary',
    summary: 'Counts of peers, peers online and ACLs (operators only).',
    description: 'Service-wide counts for dashboards: registered peers, peers online now, ACLs.',
    example: {},
    effects: readOnly,
    request: z.strictObject({}),
    response: z.object({ peers: z.number().int(), online: z.number().int(), acls: z.number().int() }),
    auth: { kind: 'bridge' },
    handler: ({ service }) => service.admin.summary(),
  }),
];
