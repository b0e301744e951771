import { createListCursor, isoTimestamp, keysetPage } from '@agentinfra/core';
import { z } from 'zod';
import type { AclProtocol } from './acl.js';
import type {
  AdminListAclsRequest,
  AdminListAclsResponse,
  AdminListPeersRequest,
  AdminListPeersResponse,
  AdminListRefusalsRequest,
  AdminListRefusalsResponse,
  AdminSummaryResponse,
} from './admin-schemas.js';
import { orderedPair } from './preshared-keys.js';
import type { MeshDeps } from './service.js';

const peerCursor = createListCursor({ schema: z.strictObject({ a: z.string() }), field: 'cursor' });
const aclCursor = createListCursor({
  schema: z.strictObject({ f: z.string(), t: z.string(), p: z.string(), n: z.int() }),
  field: 'cursor',
});

const refusalCursor = createListCursor({ schema: z.strictObject({ r: z.string(), d: z.string() }), field: 'cursor' });

const countOf = (row: unknown) => Number((row as { n: number | string } | undefined)?.n ?? 0);

/**
 * What operators list across the mesh (the console's reads): every peer with
 * its online state, every ACL with when its pair's PSK last rotated, every
 * refusal, and counts. A peer is online when it was seen within `onlineWindowSeconds`,
 * as in /netmap.
 */
export function createMeshAdmin(deps: Pick<MeshDeps, 'sql' | 'clock' | 'moduleConfig'>) {
  const knex = () => deps.sql.knex;
  const onlineWindowMs = deps.moduleConfig.onlineWindowSeconds * 1000;
  return {
    /** Peers in agent id order. @throws InputError for a cursor this list did not make. */
    async listPeers(input: AdminListPeersRequest): Promise<AdminListPeersResponse> {
      const at = deps.clock.now();
      const query = knex()('mesh_peers').select('agent_id', 'address', 'pubkey', 'endpoint', 'registered_at', 'last_seen');
      if (input.cursor !== null) query.where('agent_id', '>', peerCursor.decode(input.cursor).a);
      const rows = (await query.orderBy('agent_id').limit(input.limit + 1)) as Array<{
        agent_id: string;
        address: string;
        pubkey: string;
        endpoint: string;
        registered_at: number | string;
        last_seen: number | string;
      }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) => peerCursor.encode({ a: last.agent_id }));
      return {
        peers: page.map((row) => ({
          agent_id: row.agent_id,
          address: row.address,
          pubkey: row.pubkey,
          endpoint: row.endpoint,
          online: at - Number(row.last_seen) <= onlineWindowMs,
          registered_at: isoTimestamp(Number(row.registered_at)),
          last_seen: isoTimestamp(Number(row.last_seen)),
        })),
        next_cursor,
      };
    },

    /**
     * ACLs in (from_agent, to_agent, proto, port) order, optionally those
     * involving one agent, each with its pair's last PSK rotation (`null`
     * before the pair's first /wg_config).
     * @throws InputError for a cursor this list did not make.
     */
    async listAcls(input: AdminListAclsRequest): Promise<AdminListAclsResponse> {
      const query = knex()('mesh_acls').select('from_agent', 'to_agent', 'proto', 'port', 'created_at');
      if (input.agent_id !== undefined) {
        const agent = input.agent_id;
        query.where((where) => where.where({ from_agent: agent }).orWhere({ to_agent: agent }));
      }
      if (input.cursor !== null) {
        const after = aclCursor.decode(input.cursor);
        query.whereRaw('(from_agent, to_agent, proto, port) > (?, ?, ?, ?)', [after.f, after.t, after.p, after.n]);
      }
      const rows = (await query.orderBy(['from_agent', 'to_agent', 'proto', 'port']).limit(input.limit + 1)) as Array<{
        from_agent: string;
        to_agent: string;
        proto: AclProtocol;
        port: number | string;
        created_at: number | string;
      }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) =>
        aclCursor.encode({ f: last.from_agent, t: last.to_agent, p: last.proto, n: Number(last.port) }),
      );
      const pairs = new Map<string, number>();
      if (page.length > 0) {
        const keys = page.map((row) => orderedPair(row.from_agent, row.to_agent));
        const psks = (await knex()('mesh_psks')
          .select('agent_a', 'agent_b', 'rotated_at')
          .whereIn(
            'agent_a',
            keys.map((pair) => pair.a),
          )
          .whereIn(
            'agent_b',
            keys.map((pair) => pair.b),
          )) as Array<{ agent_a: string; agent_b: string; rotated_at: number | string }>;
        for (const row of psks) pairs.set(`${row.agent_a}\0${row.agent_b}`, Number(row.rotated_at));
      }
      return {
        acls: page.map((row) => {
          const pair = orderedPair(row.from_agent, row.to_agent);
          const rotated = pairs.get(`${pair.a}\0${pair.b}`);
          return {
            from_agent: row.from_agent,
            to_agent: row.to_agent,
            port: Number(row.port),
            proto: row.proto,
            created_at: isoTimestamp(Number(row.created_at)),
            psk_rotated_at: rotated === undefined ? null : isoTimestamp(rotated),
          };
        }),
        next_cursor,
      };
    },

    /** Refusals in (refuser, refused) order. @throws InputError for a cursor this list did not make. */
    async listRefusals(input: AdminListRefusalsRequest): Promise<AdminListRefusalsResponse> {
      const query = knex()('mesh_acl_refusals').select('refuser', 'refused', 'created_at');
      if (input.cursor !== null) {
        const after = refusalCursor.decode(input.cursor);
        query.whereRaw('(refuser, refused) > (?, ?)', [after.r, after.d]);
      }
      const rows = (await query.orderBy(['refuser', 'refused']).limit(input.limit + 1)) as Array<{
        refuser: string;
        refused: string;
        created_at: number | string;
      }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) => refusalCursor.encode({ r: last.refuser, d: last.refused }));
      return {
        refusals: page.map((row) => ({ refuser: row.refuser, refused: row.refused, created_at: isoTimestamp(Number(row.created_at)) })),
        next_cursor,
      };
    },

    /** Service-wide counts: peers, peers online now, ACLs. */
    async summary(): Promise<AdminSummaryResponse> {
      const since = deps.clock.now() - onlineWindowMs;
      const [peers, online, acls] = await Promise.all([
        knex()('mesh_peers').count({ n: '*' }).first(),
        knex()('mesh_peers').count({ n: '*' }).where('last_seen', '>=', since).first(),
        knex()('mesh_acls').count({ n: '*' }).first(),
      ]);
      return { peers: countOf(peers), online: countOf(online), acls: countOf(acls) };
    },
  };
}

/** The operator listings of agent-mesh (see {@link createMeshAdmin}). */
export type MeshAdmin = ReturnType<typeof createMeshAdmin>;
