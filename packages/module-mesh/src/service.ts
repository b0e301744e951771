import { ConflictError, isoTimestamp, type ModuleDeps, NotFoundError } from '@agentinfra/core';
import type { Knex } from 'knex';
import type { AclProtocol } from './acl.js';
import { allocateAddress } from './address-allocation.js';
import { createAddressPool } from './address-pool.js';
import { createMeshAdmin } from './admin-queries.js';
import type { MeshConfig } from './config.js';
import { portOfStoredEndpoint, usableEndpoint } from './endpoint.js';
import { type InboundRule, nftablesHooks } from './nftables-rules.js';
import { newPresharedKey, orderedPair, presharedKeyContext } from './preshared-keys.js';
import { createPskReseal } from './psk-reseal.js';
import type {
  AcceptPeerRequest,
  AcceptPeerResponse,
  AclRequest,
  AclView,
  ActingAgent,
  AgentOnlyRequest,
  HeartbeatResponse,
  NetmapResponse,
  OwnPeerView,
  PeerView,
  RegisterPeerRequest,
  RegisterPeerResponse,
  RevokeAclResponse,
  RotatePskRequest,
  RotatePskResponse,
  WgConfigResponse,
} from './schemas.js';
import { renderWgQuickConfig } from './wg-quick-config.js';

/** Ports the mesh service uses. */
export type MeshDeps = ModuleDeps<'sql' | 'clock' | 'secretBox', MeshConfig>;

interface PeerRow {
  agent_id: string;
  pubkey: string;
  endpoint: string;
  address: string;
  registered_at: number;
  updated_at: number;
  last_seen: number;
}

interface AclRow {
  from_agent: string;
  to_agent: string;
  proto: AclProtocol;
  port: number;
}

interface PskRow {
  agent_a: string;
  agent_b: string;
  sealed: string;
}

/** Registrations retried after a unique-constraint race (same agent or same key registered at once). */
const REGISTER_ATTEMPTS = 4;
/**
 * Pairs per transaction when PSKs are created in bulk: one INSERT far below every driver's parameter limit,
 * and as many pair locks, well within PostgreSQL's shared lock table.
 */
const PSK_INSERT_CHUNK = 200;

/** Compares by code unit, as SQLite orders text (and PostgreSQL with the C collation), so ACLs sort like the peers beside them. */
const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const byAcl = (x: AclRow, y: AclRow) =>
  byCodeUnit(x.from_agent, y.from_agent) || byCodeUnit(x.to_agent, y.to_agent) || byCodeUnit(x.proto, y.proto) || x.port - y.port;

/**
 * The agents an ACL lets `agentId` reach. Only their endpoints are shown to
 * it: a peer that may only reach `agentId` connects first, and WireGuard
 * learns its endpoint from that handshake.
 */
function reachableFrom(agentId: string, acls: readonly AclRow[]): Set<string> {
  return new Set(acls.filter((acl) => acl.from_agent === agentId).map((acl) => acl.to_agent));
}

/**
 * agent-mesh without HTTP: the coordination plane of a WireGuard mesh
 * between agents (like headscale or NetBird's management server). It stores
 * public keys, endpoints, mesh addresses, ACLs and pairwise PSKs (sealed
 * with the core SecretBox, AES-256-GCM), and renders wg-quick
 * configurations. It never sees a private key. Methods take the parsed
 * request bodies (`z.output` of the schemas in `schemas.ts`, with `agent_id`
 * resolved: the kernel parses each body once; a library caller with untyped
 * data runs core's `parseRequest` first) and return the response shapes.
 */
export function createMeshService(deps: MeshDeps) {
  const knex = () => deps.sql.knex;
  const now = () => deps.clock.now();
  const pool = createAddressPool(deps.moduleConfig.prefix);
  const onlineWindowMs = deps.moduleConfig.onlineWindowSeconds * 1000;
  const reseal = createPskReseal({ sql: deps.sql, secretBox: deps.secretBox });

  /** The viewer's own peer at `at` (epoch ms): everything, its endpoint as stored. */
  const ownView = (row: PeerRow, at: number): OwnPeerView => ({
    agent_id: row.agent_id,
    address: row.address,
    pubkey: row.pubkey,
    endpoint: row.endpoint,
    online: at - Number(row.last_seen) <= onlineWindowMs,
    last_seen: isoTimestamp(Number(row.last_seen)),
  });

  /**
   * Another peer as the viewer is shown it at `at` (epoch ms).
   * @param reachable `true` for a peer that opened a port to the viewer: its endpoint (unless no longer valid, see
   * {@link usableEndpoint}) and its presence. `false` for a peer that may only reach the viewer, through ACLs the
   * viewer or the operator put, never the peer itself: it only answers the viewer's peer and never agreed to be
   * watched, so its endpoint, `online` and `last_seen` are `null`.
   */
  const peerView = (row: PeerRow, at: number, reachable: boolean): PeerView => {
    if (!reachable)
      return { agent_id: row.agent_id, address: row.address, pubkey: row.pubkey, endpoint: null, online: null, last_seen: null };
    return { ...ownView(row, at), endpoint: usableEndpoint(row.endpoint) };
  };

  async function peerOf(agentId: string, db: Knex = knex()): Promise<PeerRow | undefined> {
    return (await db('mesh_peers').where({ agent_id: agentId }).first()) as PeerRow | undefined;
  }

  /** The name of the lock of an ordered pair (see {@link lockPair}). */
  const pairLockKey = (pair: { a: string; b: string }) => `mesh:acl-pair:${pair.a}\n${pair.b}`;

  /**
   * Orders the writes of one pair (either direction): /acl/put and /acl/revoke, so a refusal and a put never
   * cross, and the PSK writes, so none lands after the revoke that unlinks the pair.
   */
  async function lockPair(trx: Knex.Transaction, acl: { from_agent: string; to_agent: string }): Promise<void> {
    await deps.sql.lockInTransaction(trx, pairLockKey(orderedPair(acl.from_agent, acl.to_agent)));
  }

  /** The row of exactly this ACL (pair, protocol and port). */
  function aclRow(trx: Knex.Transaction, acl: AclRequest) {
    return trx('mesh_acls').where({ from_agent: acl.from_agent, to_agent: acl.to_agent, proto: acl.proto, port: acl.port });
  }

  async function aclExists(trx: Knex.Transaction, acl: AclRequest): Promise<boolean> {
    return (await aclRow(trx, acl).first()) !== undefined;
  }

  /**
   * Before a put: the bridge key ends `from_agent`'s refusal of `to_agent`; an agent's put is refused while it lasts.
   * Call under {@link lockPair}.
   * @throws ConflictError (409, details `{ refused_by }`) while `from_agent` refuses `to_agent` and `actor` is an agent.
   */
  async function settleRefusal(trx: Knex.Transaction, acl: AclRequest, actor: string | null): Promise<void> {
    const refusal = trx('mesh_acl_refusals').where({ refuser: acl.from_agent, refused: acl.to_agent });
    if (actor === null) await refusal.delete();
    else if (await refusal.first()) {
      throw new ConflictError(
        `Agent "${acl.from_agent}" removed the ACLs of "${acl.to_agent}" and refuses its peer until it calls /acl/accept (or the operator puts the ACL).`,
        { refused_by: acl.from_agent },
      );
    }
  }

  /**
   * Throws unless the pair of `acl` holds fewer than `maxAclsPerPair` rules.
   * Call under {@link lockPair}, so that no other put of the pair counts at the same time.
   * @throws ConflictError (409, details `{ quota, used }`) naming the `mesh.maxAclsPerPair` limit.
   */
  async function requireRoomInPair(trx: Knex.Transaction, acl: AclRequest): Promise<void> {
    const quota = deps.moduleConfig.maxAclsPerPair;
    const counted = (await trx('mesh_acls').where({ from_agent: acl.from_agent, to_agent: acl.to_agent }).count({ n: '*' }).first()) as
      | { n: number | string }
      | undefined;
    const used = Number(counted?.n ?? 0);
    if (used < quota) return;
    throw new ConflictError(
      `The pair "${acl.from_agent}" → "${acl.to_agent}" already holds ${used} ACLs, the limit per pair (config mesh.maxAclsPerPair); revoke one before putting another.`,
      { quota, used },
    );
  }

  /**
   * `from_agent` refuses `to_agent`'s peer: removes every ACL of the pair and,
   * when there was one, records the refusal. Call under {@link lockPair}.
   * @returns how many ACLs were removed.
   */
  async function refusePeer(trx: Knex.Transaction, acl: AclRequest): Promise<number> {
    const revoked = await trx('mesh_acls').where({ from_agent: acl.from_agent, to_agent: acl.to_agent }).delete();
    if (revoked > 0) {
      await trx('mesh_acl_refusals')
        .insert({ refuser: acl.from_agent, refused: acl.to_agent, created_at: now() })
        .onConflict(['refuser', 'refused'])
        .ignore();
    }
    return revoked;
  }

  /**
   * After ACLs of the pair of `acl` went: when no ACL links the pair any more, deletes its PSK, so a
   * revoked link keeps no key at rest and a later link gets a fresh one. Call under {@link lockPair},
   * in the transaction that removed the ACLs.
   */
  async function dropKeyOfUnlinkedPair(trx: Knex.Transaction, acl: { from_agent: string; to_agent: string }): Promise<void> {
    const pair = orderedPair(acl.from_agent, acl.to_agent);
    if (!(await linked(trx, pair))) await trx('mesh_psks').where({ agent_a: pair.a, agent_b: pair.b }).delete();
  }

  async function requirePeers(agents: readonly string[], what: string): Promise<void> {
    const rows = (await knex()('mesh_peers')
      .select('agent_id')
      .whereIn('agent_id', [...agents])) as Array<{ agent_id: string }>;
    const known = new Set(rows.map((row) => row.agent_id));
    const unknown = agents.filter((agent) => !known.has(agent));
    if (unknown.length > 0) {
      throw new NotFoundError(
        `${what}: agent ${unknown.map((agent) => `"${agent}"`).join(' and ')} has no registered mesh peer (call /peer/register first).`,
      );
    }
  }

  /** Whether an ACL links the pair in either direction, i.e. each agent is in the other's /netmap and /wg_config. */
  async function linked(trx: Knex.Transaction, pair: { a: string; b: string }): Promise<boolean> {
    const acl = await trx('mesh_acls')
      .select('from_agent')
      .where({ from_agent: pair.a, to_agent: pair.b })
      .orWhere({ from_agent: pair.b, to_agent: pair.a })
      .first();
    return acl !== undefined;
  }

  /** The ACLs that involve `agentId`, from either side (two index lookups). */
  async function aclsOf(agentId: string, db: Knex): Promise<AclRow[]> {
    const columns = ['from_agent', 'to_agent', 'proto', 'port'];
    const rows = (await db('mesh_acls')
      .select(columns)
      .where({ from_agent: agentId })
      .unionAll((query) => {
        query.select(columns).from('mesh_acls').where({ to_agent: agentId });
      })) as AclRow[];
    return rows.map((row) => ({ ...row, port: Number(row.port) })).sort(byAcl);
  }

  /** The peers `agentId` may reach or that may reach it, by agent id. */
  async function visiblePeersOf(agentId: string, db: Knex): Promise<Map<string, PeerRow>> {
    const rows = (await db('mesh_peers')
      .whereIn(
        'agent_id',
        db('mesh_acls')
          .select('to_agent')
          .where({ from_agent: agentId })
          .union((query) => {
            query.select('from_agent').from('mesh_acls').where({ to_agent: agentId });
          }),
      )
      .orderBy('agent_id')) as PeerRow[];
    return new Map(rows.map((row) => [row.agent_id, row]));
  }

  /** Sealed PSKs of `agentId`'s pairs, by the other agent. */
  async function sealedKeysOf(agentId: string, db: Knex): Promise<Map<string, PskRow>> {
    const rows = (await db('mesh_psks')
      .select('agent_a', 'agent_b', 'sealed')
      .where({ agent_a: agentId })
      .unionAll((query) => {
        query.select('agent_a', 'agent_b', 'sealed').from('mesh_psks').where({ agent_b: agentId });
      })) as PskRow[];
    return new Map(rows.map((row) => [row.agent_a === agentId ? row.agent_b : row.agent_a, row]));
  }

  /** Which of `others` an ACL links with `agentId` now (in either direction). */
  async function linkedAmong(trx: Knex.Transaction, agentId: string, others: readonly string[]): Promise<Set<string>> {
    const rows = (await trx('mesh_acls')
      .select('from_agent', 'to_agent')
      .where((query) => query.where({ from_agent: agentId }).whereIn('to_agent', [...others]))
      .orWhere((query) => query.where({ to_agent: agentId }).whereIn('from_agent', [...others]))) as AclRow[];
    return new Set(rows.map((row) => (row.from_agent === agentId ? row.to_agent : row.from_agent)));
  }

  /**
   * Creates PSKs for the pairs of `agentId` with `others` that an ACL still
   * links, skipping those that have one. Each pair is checked and written
   * under its lock (taken in key order, at most {@link PSK_INSERT_CHUNK} per
   * transaction), so a revoke that unlinked a pair since it was read, and
   * deleted its key, does not see a new one appear behind it.
   */
  async function createPresharedKeys(agentId: string, others: readonly string[]): Promise<void> {
    const pairs = others
      .map((other) => ({ other, pair: orderedPair(agentId, other) }))
      .sort((x, y) => byCodeUnit(pairLockKey(x.pair), pairLockKey(y.pair)));
    for (let start = 0; start < pairs.length; start += PSK_INSERT_CHUNK) {
      const chunk = pairs.slice(start, start + PSK_INSERT_CHUNK);
      await knex().transaction(async (trx) => {
        for (const { pair } of chunk) await deps.sql.lockInTransaction(trx, pairLockKey(pair));
        const linkedNow = await linkedAmong(
          trx,
          agentId,
          chunk.map(({ other }) => other),
        );
        const at = now();
        const rows = chunk
          .filter(({ other }) => linkedNow.has(other))
          .map(({ pair }) => ({
            agent_a: pair.a,
            agent_b: pair.b,
            sealed: deps.secretBox.seal({ plaintext: newPresharedKey(), context: presharedKeyContext(pair) }),
            rotated_at: at,
          }));
        if (rows.length > 0) await trx('mesh_psks').insert(rows).onConflict(['agent_a', 'agent_b']).ignore();
      });
    }
  }

  /**
   * What /wg_config renders from, read in one snapshot (`readSnapshot`), so
   * the peers, the rules and the keys agree with each other: `agentId`'s
   * peer, its ACLs, the peers they link (by agent id) and the sealed PSKs
   * of its pairs (by the other agent).
   */
  function configView(agentId: string) {
    return deps.sql.readSnapshot(async (trx) => ({
      self: await peerOf(agentId, trx),
      acls: await aclsOf(agentId, trx),
      linkedPeers: await visiblePeersOf(agentId, trx),
      sealed: await sealedKeysOf(agentId, trx),
    }));
  }

  /**
   * {@link configView} with a PSK for every linked pair: the missing ones
   * are created (first /wg_config after an ACL appears; concurrent creators
   * converge on the row inserted first), then everything is read again in a
   * new snapshot. A pair linked after that has no key in it yet (the next
   * /wg_config has it).
   * @throws NotFoundError when the agent has no registered peer.
   */
  async function configViewWithKeys(agentId: string) {
    let view = await configView(agentId);
    const missing = [...view.linkedPeers.keys()].filter((other) => !view.sealed.has(other));
    if (view.self && missing.length > 0) {
      await createPresharedKeys(agentId, missing);
      view = await configView(agentId);
    }
    const { self } = view;
    if (!self) throw new NotFoundError(`Agent "${agentId}" has no registered mesh peer (call /peer/register first).`);
    return { ...view, self };
  }

  async function registerOnce(body: ActingAgent<RegisterPeerRequest>): Promise<RegisterPeerResponse> {
    return knex().transaction(async (trx) => {
      const at = now();
      const holder = (await trx('mesh_peers').select('agent_id').where({ pubkey: body.pubkey }).first()) as
        | { agent_id: string }
        | undefined;
      if (holder && holder.agent_id !== body.agent_id) {
        throw new ConflictError('This public key is already registered by another agent; every peer needs its own key pair.');
      }
      const existing = await peerOf(body.agent_id, trx);
      if (existing) {
        await trx('mesh_peers')
          .where({ agent_id: body.agent_id })
          .update({ pubkey: body.pubkey, endpoint: body.endpoint, updated_at: at, last_seen: at });
        return { agent_id: body.agent_id, address: existing.address, registered_at: isoTimestamp(Number(existing.registered_at)) };
      }
      const address = await allocateAddress(trx, pool);
      await trx('mesh_peers').insert({
        agent_id: body.agent_id,
        pubkey: body.pubkey,
        endpoint: body.endpoint,
        address,
        registered_at: at,
        updated_at: at,
        last_seen: at,
      });
      return { agent_id: body.agent_id, address, registered_at: isoTimestamp(at) };
    });
  }

  return {
    /**
     * Registers an agent's WireGuard public key and endpoint, or updates
     * them; the mesh address is allocated on the first registration and kept
     * afterwards. Registering counts as being seen.
     * @param body.pubkey base64 Curve25519 public key (validated by the schema).
     * @param body.endpoint `<host>:<port>` (validated by the schema).
     * @returns `{ agent_id, address, registered_at }`, `registered_at` being the first registration.
     * @throws ConflictError when another agent holds the public key, or the prefix is exhausted.
     */
    async registerPeer(body: ActingAgent<RegisterPeerRequest>): Promise<RegisterPeerResponse> {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await registerOnce(body);
        } catch (error) {
          if (!deps.sql.isUniqueViolation(error) || attempt >= REGISTER_ATTEMPTS) throw error;
        }
      }
    },

    /**
     * Bumps a peer's `last_seen` to now.
     * @returns `{ agent_id, last_seen }` (ISO 8601 UTC).
     * @throws NotFoundError when the agent has no registered peer.
     */
    async heartbeat(body: ActingAgent<AgentOnlyRequest>): Promise<HeartbeatResponse> {
      const at = now();
      const updated = await knex()('mesh_peers').where({ agent_id: body.agent_id }).update({ last_seen: at });
      if (updated === 0) throw new NotFoundError(`Agent "${body.agent_id}" has no registered mesh peer (call /peer/register first).`);
      return { agent_id: body.agent_id, last_seen: isoTimestamp(at) };
    },

    /**
     * Lets `from_agent` reach `to_agent` on `port`/`proto`. Idempotent.
     * Refused while `from_agent` refuses `to_agent` (it revoked an ACL of the
     * pair itself, see {@link revokeAcl}), unless the operator puts it, which
     * ends the refusal. A new rule beyond `maxAclsPerPair` rules of the pair
     * is refused and writes nothing (an existing rule is still 200); the
     * count and the insert run in one transaction under the pair's lock, so
     * concurrent puts cannot pass the limit.
     * @param actor the agent the caller acts as, `null` for the bridge key.
     * @returns `{ from_agent, to_agent, port, proto }`.
     * @throws NotFoundError when either agent has no registered peer;
     *   ConflictError (409, details `{ refused_by }`) while `from_agent` refuses `to_agent`;
     *   ConflictError (409, details `{ quota, used }`) when the pair holds `maxAclsPerPair` rules.
     */
    async putAcl(acl: AclRequest, actor: string | null): Promise<AclView> {
      await requirePeers([acl.from_agent, acl.to_agent], 'Cannot put the ACL');
      await knex().transaction(async (trx) => {
        await lockPair(trx, acl);
        await settleRefusal(trx, acl, actor);
        if (await aclExists(trx, acl)) return;
        await requireRoomInPair(trx, acl);
        await trx('mesh_acls')
          .insert({ ...acl, created_at: now() })
          .onConflict(['from_agent', 'to_agent', 'proto', 'port'])
          .ignore();
      });
      return { from_agent: acl.from_agent, to_agent: acl.to_agent, port: acl.port, proto: acl.proto };
    },

    /**
     * Removes ACLs. Idempotent. `to_agent` and the bridge key remove the
     * named rule only. `from_agent` acting for itself refuses `to_agent`'s
     * peer: every ACL of the pair goes (whatever port and protocol are
     * named), so the peer leaves its /netmap and /wg_config, and when any
     * existed the refusal is recorded in the same transaction: later
     * /acl/put calls of `to_agent` toward `from_agent` answer 409 until
     * `from_agent` calls /acl/accept or the operator puts one. When no ACL
     * links the pair any more, its PSK is deleted in the same transaction,
     * so linking the pair again later gives it a new one.
     * @param actor the agent the caller acts as, `null` for the bridge key.
     * @returns `{ revoked }`: how many ACLs were removed (0 when there was nothing to remove).
     */
    async revokeAcl(acl: AclRequest, actor: string | null): Promise<RevokeAclResponse> {
      return knex().transaction(async (trx) => {
        await lockPair(trx, acl);
        const revoked = actor === acl.from_agent ? await refusePeer(trx, acl) : await aclRow(trx, acl).delete();
        await dropKeyOfUnlinkedPair(trx, acl);
        return { revoked };
      });
    },

    /**
     * Ends `from_agent`'s refusal of `to_agent`, so that `to_agent` may put
     * ACLs toward it again. Idempotent.
     * @returns `{ from_agent, to_agent, lifted }`: 1 when there was a refusal, else 0.
     */
    async acceptPeer(body: AcceptPeerRequest): Promise<AcceptPeerResponse> {
      const lifted = await knex().transaction(async (trx): Promise<number> => {
        await lockPair(trx, body);
        return await trx('mesh_acl_refusals').where({ refuser: body.from_agent, refused: body.to_agent }).delete();
      });
      return { from_agent: body.from_agent, to_agent: body.to_agent, lifted };
    },

    /**
     * What `agent_id` sees: its own peer (`self`, `null` before it
     * registers), the peers it may reach or that may reach it (sorted by
     * agent id) and the ACLs that involve it. A peer that may only reach
     * `agent_id` never agreed to be shown (its ACLs toward `agent_id` were
     * put by `agent_id` or the operator), so its `endpoint`, `online` and
     * `last_seen` are `null`. Read in one snapshot of the database. Cost
     * grows with the visible peers, not with the mesh.
     */
    async netmap(body: ActingAgent<AgentOnlyRequest>): Promise<NetmapResponse> {
      const at = now();
      const { self, acls, visible } = await deps.sql.readSnapshot(async (trx) => ({
        self: await peerOf(body.agent_id, trx),
        acls: await aclsOf(body.agent_id, trx),
        visible: await visiblePeersOf(body.agent_id, trx),
      }));
      const reachable = reachableFrom(body.agent_id, acls);
      return {
        self: self ? ownView(self, at) : null,
        peers: [...visible.values()].map((row) => peerView(row, at, reachable.has(row.agent_id))),
        acls: acls.map((acl) => ({ from_agent: acl.from_agent, to_agent: acl.to_agent, port: acl.port, proto: acl.proto })),
      };
    },

    /**
     * The wg-quick configuration of `agent_id`: its interface (mesh address,
     * the port of its endpoint as `ListenPort`, a `PrivateKey` placeholder,
     * nftables hooks allowing only what ACLs open) and one `[Peer]` per
     * visible peer with the pair's PSK. Peers, rules and keys come from one
     * snapshot of the database, so a revoke and re-link of a pair that commits
     * while the config is read cannot pair the new key with the old rules.
     * @returns `{ config }` (the text).
     * @throws NotFoundError when the agent has no registered peer.
     */
    async wgConfig(body: ActingAgent<AgentOnlyRequest>): Promise<WgConfigResponse> {
      const { self, acls, linkedPeers, sealed } = await configViewWithKeys(body.agent_id);
      // A pair linked since the keys were created has none yet: that peer is out of this config, its rules with it.
      const keys = new Map<string, string>();
      for (const [other, row] of sealed) {
        if (!linkedPeers.has(other)) continue;
        keys.set(other, deps.secretBox.open({ sealed: row.sealed, context: presharedKeyContext({ a: row.agent_a, b: row.agent_b }) }));
      }
      const visible = new Map([...linkedPeers].filter(([agent]) => keys.has(agent)));
      const inbound: InboundRule[] = acls.flatMap((acl) => {
        const from = acl.to_agent === body.agent_id ? visible.get(acl.from_agent) : undefined;
        return from ? [{ address: from.address, proto: acl.proto, port: acl.port }] : [];
      });
      const reachable = reachableFrom(body.agent_id, acls);
      const listenPort = portOfStoredEndpoint(self.endpoint);
      if (listenPort === null) throw new Error(`Stored endpoint of "${body.agent_id}" has no valid port.`);
      const config = renderWgQuickConfig({
        agentId: body.agent_id,
        address: pool.hostRoute(self.address),
        listenPort,
        keepaliveSeconds: deps.moduleConfig.keepaliveSeconds,
        hooks: nftablesHooks(inbound),
        peers: [...visible.values()].map((peer) => ({
          agentId: peer.agent_id,
          publicKey: peer.pubkey,
          presharedKey: keys.get(peer.agent_id) as string,
          allowedIp: pool.hostRoute(peer.address),
          endpoint: reachable.has(peer.agent_id) ? usableEndpoint(peer.endpoint) : null,
        })),
      });
      return { config };
    },

    /**
     * Replaces the PSK of the pair (a, b) with 32 new random bytes (or
     * creates it). Both sides get it from their next /wg_config. Only a
     * linked pair (an ACL in either direction, so each is in the other's
     * /wg_config) has a PSK; the check and the write run under the pair's
     * lock, so a concurrent /acl/revoke cannot leave a PSK behind it.
     * @returns `{ a, b, rotated_at }`, never the key.
     * @throws NotFoundError when no ACL links a and b, with one message whether or not
     *   either has a registered peer (an ACL needs both), so the answer tells no one who is on the mesh.
     */
    async rotatePsk(body: RotatePskRequest): Promise<RotatePskResponse> {
      const pair = orderedPair(body.a, body.b);
      return knex().transaction(async (trx) => {
        await lockPair(trx, { from_agent: body.a, to_agent: body.b });
        if (!(await linked(trx, pair))) {
          throw new NotFoundError(
            `Cannot rotate the PSK: no ACL links "${body.a}" and "${body.b}" (a pair has a PSK only while an ACL, between two registered peers, links it).`,
          );
        }
        const at = now();
        const sealed = deps.secretBox.seal({ plaintext: newPresharedKey(), context: presharedKeyContext(pair) });
        await trx('mesh_psks')
          .insert({ agent_a: pair.a, agent_b: pair.b, sealed, rotated_at: at })
          .onConflict(['agent_a', 'agent_b'])
          .merge({ sealed, rotated_at: at });
        return { a: body.a, b: body.b, rotated_at: isoTimestamp(at) };
      });
    },

    /**
     * Finishes a master-key rotation for the mesh: every PSK sealed under an
     * older key version is sealed again under the current one (same pair
     * context), unless it was rotated meanwhile. Idempotent; run hourly by
     * the `mesh.reseal-keys` job.
     * @returns how many PSKs were resealed.
     * @throws UnopenedSealedValuesError when some PSKs could not be opened (the others are resealed all the same).
     */
    resealKeys(options: { signal?: AbortSignal } = {}): Promise<number> {
      return reseal.resealAll(options);
    },

    /** Listings across the mesh for operators (the `/admin/*` routes). */
    admin: createMeshAdmin(deps),
  };
}

/** The mesh service (see {@link createMeshService}). */
export type MeshService = ReturnType<typeof createMeshService>;
