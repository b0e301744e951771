import {
  AuthenticationError,
  ConflictError,
  chunks,
  createListCursor,
  hashCredential,
  InputError,
  isoTimestamp,
  keysetPage,
  type ModuleDeps,
  NotAllowedError,
  NotFoundError,
  newCredential,
  newId,
  type Principal,
  resealSealedColumn,
  SQL_ID_CHUNK,
} from '@agentinfra/core';
import { z } from 'zod';
import { createIdentityAdmin } from './admin-queries.js';
import { assertRoomForDelegation, assertRoomForSecret } from './agent-quotas.js';
import type { IdentityConfig } from './config.js';
import { createCredentialCache } from './credential-cache.js';
import { isMadeFrom } from './delegation-lineage.js';
import { DAY_MS, deleteEndedBefore, pruneEndedDelegations, RETAIN_ENDED_MS } from './ended-credentials.js';
import { nameSearchForm } from './name-search.js';
import type {
  CreateAgentRequest,
  CreateAgentResponse,
  DelegateRequest,
  DelegateResponse,
  DeleteSecretResponse,
  GetSecretResponse,
  IssueDeviceRequest,
  IssueDeviceResponse,
  ListSecretsRequest,
  ListSecretsResponse,
  PutSecretRequest,
  PutSecretResponse,
  RevokeDelegationRequest,
  RevokeDelegationResponse,
  RevokeDeviceRequest,
  RevokeDeviceResponse,
  SecretRefRequest,
  TeamMemberRequest,
  TeamMembersResponse,
} from './schemas.js';
import { secretKeySchema } from './schemas.js';

/** Most verified credentials kept in memory. */
const CREDENTIAL_CACHE_ENTRIES = 10_000;
/** The position after a /secrets/list page: the last key listed. */
const secretCursor = createListCursor({ schema: z.strictObject({ k: secretKeySchema }), field: 'cursor' });

/** Ports the identity service uses. */
export type IdentityDeps = ModuleDeps<'sql' | 'clock' | 'secretBox' | 'settings' | 'permissions' | 'audit', IdentityConfig>;

interface DeviceRow {
  device_id: string;
  agent_id: string;
  expires_at: number;
  revoked_at: number | null;
}

interface DelegationRow {
  delegation_id: string;
  from_agent: string;
  to_agent: string;
  /** The `to_agent` of the chain's first delegation, for one made with a token; otherwise null. */
  chain_to_agent?: string | null;
  /** The delegation whose token made this one; null for one made with a device key or the bridge key. */
  parent_delegation_id?: string | null;
  scope: string;
  expires_at: number;
  revoked_at: number | null;
}

/**
 * agent-identity without HTTP: agents, device keys, delegations, encrypted
 * secrets, teams and credential verification. Credentials are returned once
 * and stored only as SHA-256; secrets are sealed with the core SecretBox
 * (AES-256-GCM, bound to agent and key). Methods take the parsed request
 * bodies (`z.output` of the schemas in `schemas.ts`: the kernel parses each
 * body once; a library caller with untyped input runs core's `parseRequest`
 * first).
 */
export function createIdentityService(deps: IdentityDeps) {
  const knex = () => deps.sql.knex;
  const now = () => deps.clock.now();
  const verified = createCredentialCache({ ttlMs: deps.moduleConfig.credentialCacheMs, maxEntries: CREDENTIAL_CACHE_ENTRIES });

  async function requireAgent(agentId: string): Promise<void> {
    const row = await knex()('identity_agents').select('agent_id').where({ agent_id: agentId }).first();
    if (!row) throw new NotFoundError(`Agent "${agentId}" does not exist.`);
  }

  const secretContext = (agentId: string, key: string) => `identity.secret\0${agentId}\0${key}`;

  const service = {
    /** Creates an agent. @throws ConflictError when `agent_id` is taken. */
    async createAgent(body: CreateAgentRequest): Promise<CreateAgentResponse> {
      const createdAt = now();
      try {
        await knex()('identity_agents').insert({
          agent_id: body.agent_id,
          display_name: body.display_name,
          display_name_search: nameSearchForm(body.display_name),
          created_at: createdAt,
        });
      } catch (error) {
        if (deps.sql.isUniqueViolation(error)) throw new ConflictError(`Agent "${body.agent_id}" already exists.`);
        throw error;
      }
      return { agent_id: body.agent_id, created_at: isoTimestamp(createdAt) };
    },

    /**
     * Issues a device key for an agent; the key is in the result and nowhere else, ever.
     * @param body.ttl_days lifetime; the configured default (90 days) when absent.
     * @throws NotFoundError when the agent does not exist.
     */
    async issueDevice(body: IssueDeviceRequest): Promise<IssueDeviceResponse> {
      await requireAgent(body.agent_id);
      const deviceKey = newCredential('dk_');
      const deviceId = newId('dev_');
      const createdAt = now();
      const expiresAt = createdAt + (body.ttl_days ?? deps.moduleConfig.deviceKeyTtlDays) * DAY_MS;
      await knex()('identity_devices').insert({
        device_id: deviceId,
        agent_id: body.agent_id,
        label: body.label,
        key_hash: hashCredential(deviceKey),
        created_at: createdAt,
        expires_at: expiresAt,
        revoked_at: null,
      });
      return { device_key: deviceKey, device_id: deviceId, expires_at: isoTimestamp(expiresAt) };
    },

    /**
     * Revokes a device. The bridge key may revoke any device, a device key only itself,
     * a delegation token none (the route refuses those too). Revoking twice returns the first revocation time.
     * @returns the response body (`device_id`, `revoked_at`) and `agent_id`, the agent the device belongs to
     *   (for the audit log: the route leaves it out of its response).
     * @throws NotFoundError for an unknown device; NotAllowedError for another device's key or a delegation token.
     */
    async revokeDevice(body: RevokeDeviceRequest, principal: Principal): Promise<RevokeDeviceResponse & { agent_id: string }> {
      if (principal.kind === 'delegation') {
        throw new NotAllowedError('This operation takes a device key or the bridge key; delegation tokens cannot perform it.');
      }
      if (principal.kind === 'device' && principal.deviceId !== body.device_id) {
        throw new NotAllowedError('A device key can revoke only its own device; use the bridge key for others.');
      }
      const row = (await knex()('identity_devices').where({ device_id: body.device_id }).first()) as DeviceRow | undefined;
      if (!row) throw new NotFoundError(`Device "${body.device_id}" does not exist.`);
      if (row.revoked_at === null) {
        await knex()('identity_devices').where({ device_id: body.device_id }).whereNull('revoked_at').update({ revoked_at: now() });
      }
      // Read back, not the time this call wrote: of revocations at the same moment only the first one's time is stored.
      const stored = (await knex()('identity_devices').where({ device_id: body.device_id }).first('revoked_at')) as Pick<
        DeviceRow,
        'revoked_at'
      >;
      const revokedAt = stored.revoked_at ?? now();
      verified.forget((cached) => cached.kind === 'device' && cached.deviceId === body.device_id);
      return { device_id: body.device_id, revoked_at: isoTimestamp(revokedAt), agent_id: row.agent_id };
    },

    /**
     * Creates a delegation token acting as `from_agent` for `scope` until `expires_at`.
     * A delegation (as `principal`) can only pass on permissions it holds
     * itself, for no longer than it lives itself; the new delegation is
     * recorded as made from it, and revoking it revokes the new one too.
     * At most setting `identity_max_live_delegations_per_agent` (default 10 000) of `from_agent`'s
     * delegations are live at once, those made with its tokens included, and as many ended ones
     * are kept: its ended delegations beyond that, oldest end first, are deleted here (before their 7 days).
     * @throws InputError for an unknown permission or an expiry in the past, too far ahead
     *   or past the delegating token's own; NotFoundError when `to_agent` does not exist;
     *   NotAllowedError when escalating; ConflictError (409, details `{ quota, used }`) when
     *   `from_agent` has its quota of live delegations.
     */
    async delegate(body: DelegateRequest, principal: Principal): Promise<DelegateResponse> {
      const unknown = body.scope.filter((name) => !deps.permissions.has(name));
      if (unknown.length > 0) {
        throw new InputError(`Unknown permission ${unknown.map((name) => `"${name}"`).join(', ')}.`, {
          fields: [{ path: 'scope', message: `unknown: ${unknown.join(', ')}` }],
          allowed: deps.permissions.names,
        });
      }
      const createdAt = now();
      if (body.expires_at <= createdAt) {
        throw new InputError('expires_at must be in the future.', { fields: [{ path: 'expires_at', message: 'in the past' }] });
      }
      if (body.expires_at > createdAt + deps.moduleConfig.maxDelegationDays * DAY_MS) {
        throw new InputError(`expires_at must be within ${deps.moduleConfig.maxDelegationDays} days.`, {
          fields: [{ path: 'expires_at', message: 'too far in the future' }],
        });
      }
      if (principal.kind === 'delegation') {
        const held = principal.permissions;
        const missing = body.scope.filter((name) => !held.includes(name));
        if (missing.length > 0) throw new NotAllowedError(`A delegation cannot grant permissions it lacks: ${missing.join(', ')}.`);
      }
      await requireAgent(body.from_agent);
      await requireAgent(body.to_agent);
      const token = newCredential('dt_');
      const delegationId = newId('dlg_');
      const scope = [...new Set(body.scope)].sort();
      // Read before the transaction: on SQLite the pool's one connection belongs to the transaction inside it.
      const delegationQuota = await deps.settings.get<number>('identity_max_live_delegations_per_agent');
      await knex().transaction(async (trx) => {
        if (principal.kind === 'delegation') {
          // Read under a row lock: a revocation of the parent either commits first (and this refuses)
          // or waits for this insert (and its walk then finds the child), also when another
          // replica still has the parent's token cached.
          const parent = (await trx('identity_delegations')
            .select('expires_at', 'revoked_at')
            .where({ delegation_id: principal.delegationId })
            .forUpdate()
            .first()) as { expires_at: number; revoked_at: number | null } | undefined;
          if (!parent || parent.revoked_at !== null || Number(parent.expires_at) <= createdAt) {
            throw new AuthenticationError('The delegation token is unknown, expired or revoked.');
          }
          if (body.expires_at > Number(parent.expires_at)) {
            throw new InputError(
              `expires_at must not be later than the delegating token's own expiry (${isoTimestamp(Number(parent.expires_at))}).`,
              { fields: [{ path: 'expires_at', message: 'after the delegating token expires' }] },
            );
          }
        }
        await assertRoomForDelegation({
          sql: deps.sql,
          trx,
          agentId: body.from_agent,
          now: createdAt,
          quota: delegationQuota,
        });
        await pruneEndedDelegations({ trx, agentId: body.from_agent, now: createdAt, keep: delegationQuota });
        await trx('identity_delegations').insert({
          delegation_id: delegationId,
          token_hash: hashCredential(token),
          from_agent: body.from_agent,
          to_agent: body.to_agent,
          scope: JSON.stringify(scope),
          created_at: createdAt,
          expires_at: body.expires_at,
          revoked_at: null,
          parent_delegation_id: principal.kind === 'delegation' ? principal.delegationId : null,
          chain_to_agent: principal.kind === 'delegation' ? principal.toAgent : null,
        });
      });
      return { delegation_id: delegationId, token, expires_at: isoTimestamp(body.expires_at), scope };
    },

    /**
     * Ends a delegation at once, and every delegation made from it (by its
     * token, and so on down). Allowed for the bridge key, a device key of the
     * delegating agent, the token itself, or a token holding
     * `identity.delegate` that made it (directly or down a chain): a token
     * cannot end its siblings or its parent, which may hold permissions it lacks.
     * @returns the response body (`delegation_id`, `revoked_at`) and `from_agent`, the delegating agent
     *   (for the audit log: the route leaves it out of its response).
     * @throws NotFoundError when it does not exist or the caller may not see it.
     */
    async revokeDelegation(
      body: RevokeDelegationRequest,
      principal: Principal,
    ): Promise<RevokeDelegationResponse & { from_agent: string }> {
      const row = (await knex()('identity_delegations').where({ delegation_id: body.delegation_id }).first()) as DelegationRow | undefined;
      const visible =
        row &&
        (principal.kind === 'bridge' ||
          (principal.kind === 'delegation' && principal.delegationId === row.delegation_id) ||
          (principal.kind === 'device' && principal.agentId === row.from_agent) ||
          (principal.kind === 'delegation' &&
            principal.agentId === row.from_agent &&
            principal.permissions.includes('identity.delegate') &&
            (await isMadeFrom(knex(), row.parent_delegation_id ?? null, principal.delegationId))));
      if (!row || !visible) throw new NotFoundError(`Delegation "${body.delegation_id}" does not exist.`);
      const at = now();
      const revoked = new Set<string>();
      const revokedAt = await knex().transaction(async (trx) => {
        let level = [row.delegation_id];
        while (level.length > 0) {
          const next: string[] = [];
          for (const id of level) revoked.add(id);
          // A level may hold any number of delegations: bound the ids per statement.
          for (const ids of chunks(level, SQL_ID_CHUNK)) {
            await trx('identity_delegations').whereIn('delegation_id', ids).whereNull('revoked_at').update({ revoked_at: at });
            const children = (await trx('identity_delegations').select('delegation_id').whereIn('parent_delegation_id', ids)) as Array<{
              delegation_id: string;
            }>;
            for (const child of children) if (!revoked.has(child.delegation_id)) next.push(child.delegation_id);
          }
          level = next;
        }
        // Read back, not `at`: of revocations at the same moment only the first one's time is stored.
        const stored = (await trx('identity_delegations').where({ delegation_id: row.delegation_id }).first('revoked_at')) as {
          revoked_at: number | null;
        };
        return stored.revoked_at ?? at;
      });
      verified.forget((cached) => cached.kind === 'delegation' && revoked.has(cached.delegationId));
      return { delegation_id: row.delegation_id, revoked_at: isoTimestamp(revokedAt), from_agent: row.from_agent };
    },

    /**
     * Stores (or replaces) a secret, sealed with AES-256-GCM. A new key is
     * stored only while the agent holds fewer than setting `identity_max_secrets_per_agent`
     * secrets (default 500); replacing a stored key always is.
     * @throws NotFoundError when the agent does not exist; ConflictError (409, details `{ quota, used }`)
     *   for a new key when the agent holds its quota of secrets.
     */
    async putSecret(body: PutSecretRequest): Promise<PutSecretResponse> {
      await requireAgent(body.agent_id);
      const sealed = deps.secretBox.seal({ plaintext: body.value, context: secretContext(body.agent_id, body.key) });
      const at = now();
      // Read before the transaction: on SQLite the pool's one connection belongs to the transaction inside it.
      const quota = await deps.settings.get<number>('identity_max_secrets_per_agent');
      await knex().transaction(async (trx) => {
        await assertRoomForSecret({ sql: deps.sql, trx, agentId: body.agent_id, key: body.key, quota });
        await trx('identity_secrets')
          .insert({ agent_id: body.agent_id, key: body.key, sealed, created_at: at, updated_at: at })
          .onConflict(['agent_id', 'key'])
          .merge({ sealed, updated_at: at });
      });
      return { key: body.key, updated_at: isoTimestamp(at) };
    },

    /** The plain value of a secret. @throws NotFoundError when absent. */
    async getSecret(body: SecretRefRequest): Promise<GetSecretResponse> {
      const row = (await knex()('identity_secrets').select('sealed').where({ agent_id: body.agent_id, key: body.key }).first()) as
        | { sealed: string }
        | undefined;
      if (!row) throw new NotFoundError(`Secret "${body.key}" does not exist for agent "${body.agent_id}".`);
      return { value: deps.secretBox.open({ sealed: row.sealed, context: secretContext(body.agent_id, body.key) }) };
    },

    /**
     * One page of an agent's secrets: names and update times (never values),
     * sorted by key, at most `limit` (default 500, the default quota: one page
     * holds them all unless an operator raised it), after the key in `cursor`.
     * @returns the page and `next_cursor`, null on the last page.
     * @throws InputError (400, field `cursor`) for a cursor this list did not make.
     */
    async listSecrets(body: ListSecretsRequest): Promise<ListSecretsResponse> {
      const query = knex()('identity_secrets').select('key', 'updated_at').where({ agent_id: body.agent_id });
      if (body.cursor !== null) query.where('key', '>', secretCursor.decode(body.cursor).k);
      const rows = (await query.orderBy('key').limit(body.limit + 1)) as Array<{ key: string; updated_at: number | string }>;
      const { page, next_cursor } = keysetPage(rows, body.limit, (last) => secretCursor.encode({ k: last.key }));
      return {
        secrets: page.map((row) => ({ key: row.key, updated_at: isoTimestamp(Number(row.updated_at)) })),
        next_cursor,
      };
    },

    /** Deletes a secret. @throws NotFoundError when absent. */
    async deleteSecret(body: SecretRefRequest): Promise<DeleteSecretResponse> {
      const deleted = await knex()('identity_secrets').where({ agent_id: body.agent_id, key: body.key }).delete();
      if (deleted === 0) throw new NotFoundError(`Secret "${body.key}" does not exist for agent "${body.agent_id}".`);
      return { key: body.key, deleted: true };
    },

    /**
     * Re-encrypts every secret sealed with an older master key (see `resealSealedColumn`); a secret
     * replaced meanwhile keeps its new value.
     * @returns how many were resealed.
     * @throws UnopenedSealedValuesError after the walk when some secrets could not be opened, naming up to 5
     *   (agent, key) pairs; the others are resealed all the same.
     */
    resealSecrets(options: { signal?: AbortSignal } = {}) {
      return resealSealedColumn({
        signal: options.signal,
        sql: deps.sql,
        secretBox: deps.secretBox,
        table: 'identity_secrets',
        keyColumns: ['agent_id', 'key'],
        sealedColumn: 'sealed',
        contextOf: (row: { agent_id: string; key: string }) => secretContext(row.agent_id, row.key),
        what: 'agent secret',
      });
    },

    /**
     * Which of `agentIds` are not registered agents (one lookup by primary key for all of them).
     * @returns the unregistered ids, in the order given; empty when all exist.
     */
    async missingAgents(agentIds: readonly string[]): Promise<string[]> {
      const rows = (await knex()('identity_agents')
        .select('agent_id')
        .whereIn('agent_id', [...agentIds])) as Array<{ agent_id: string }>;
      const registered = new Set(rows.map((row) => row.agent_id));
      return agentIds.filter((agentId) => !registered.has(agentId));
    },

    /** Adds an agent to a team (idempotent). @throws NotFoundError when the agent does not exist. */
    async addTeamMember(body: TeamMemberRequest): Promise<TeamMembersResponse> {
      await requireAgent(body.agent_id);
      await knex()('identity_team_members')
        .insert({ team: body.team, agent_id: body.agent_id, added_at: now() })
        .onConflict(['team', 'agent_id'])
        .ignore();
      return { team: body.team, agent_id: body.agent_id, members: await service.membersOf(body.team) };
    },

    /** Removes an agent from a team (idempotent). */
    async removeTeamMember(body: TeamMemberRequest): Promise<TeamMembersResponse> {
      await knex()('identity_team_members').where({ team: body.team, agent_id: body.agent_id }).delete();
      return { team: body.team, agent_id: body.agent_id, members: await service.membersOf(body.team) };
    },

    /** Agent ids in a team, sorted. */
    async membersOf(team: string): Promise<string[]> {
      const rows = (await knex()('identity_team_members').select('agent_id').where({ team }).orderBy('agent_id')) as Array<{
        agent_id: string;
      }>;
      return rows.map((row) => row.agent_id);
    },

    /** Teams of an agent, sorted. */
    async teamsOf(agentId: string): Promise<string[]> {
      const rows = (await knex()('identity_team_members').select('team').where({ agent_id: agentId }).orderBy('team')) as Array<{
        team: string;
      }>;
      return rows.map((row) => row.team);
    },

    /** Whether an agent is in a team. */
    async isMember(input: { agentId: string; team: string }): Promise<boolean> {
      return Boolean(await knex()('identity_team_members').select('team').where({ team: input.team, agent_id: input.agentId }).first());
    },

    /**
     * Resolves a device key (`dk_…`) or delegation token (`dt_…`) to a principal.
     * A credential verified in the last `identity.credentialCacheMs` (default
     * 5 s) is answered from memory (see {@link createCredentialCache}): never
     * past its expiry, never after this process revoked it.
     * @returns `null` when unknown, expired or revoked.
     */
    async verifyCredential(credential: string): Promise<Principal | null> {
      const isDevice = credential.startsWith('dk_');
      if (!isDevice && !credential.startsWith('dt_')) return null;
      const hash = hashCredential(credential);
      const at = now();
      const cached = verified.get(hash, at);
      if (cached !== undefined) return cached;
      const revision = verified.revision();
      let principal: Principal;
      let expiresAt: number;
      if (isDevice) {
        const row = (await knex()('identity_devices')
          .select('device_id', 'agent_id', 'expires_at', 'revoked_at')
          .where({ key_hash: hash })
          .first()) as DeviceRow | undefined;
        if (!row || row.revoked_at !== null || row.expires_at <= at) return null;
        principal = { kind: 'device', agentId: row.agent_id, deviceId: row.device_id };
        expiresAt = row.expires_at;
      } else {
        const row = (await knex()('identity_delegations')
          .select('delegation_id', 'from_agent', 'to_agent', 'chain_to_agent', 'scope', 'expires_at', 'revoked_at')
          .where({ token_hash: hash })
          .first()) as DelegationRow | undefined;
        if (!row || row.revoked_at !== null || row.expires_at <= at) return null;
        principal = {
          kind: 'delegation',
          agentId: row.from_agent,
          delegationId: row.delegation_id,
          toAgent: row.chain_to_agent ?? row.to_agent,
          permissions: JSON.parse(row.scope) as string[],
        };
        expiresAt = row.expires_at;
      }
      verified.put(hash, principal, { now: at, expiresAt, revision });
      return principal;
    },

    /**
     * Deletes devices and delegations that expired or were revoked more than 7 days ago,
     * in batches of `SQL_ID_CHUNK` rows per statement (see {@link deleteEndedBefore}), stopping
     * between batches once `signal` (the job's) aborts.
     * @returns how many rows were removed.
     * @throws `signal`'s reason when it aborted.
     */
    async sweepExpired(options: { signal?: AbortSignal } = {}): Promise<{ devices: number; delegations: number }> {
      const cutoff = now() - RETAIN_ENDED_MS;
      const { signal } = options;
      const devices = await deleteEndedBefore({ knex: knex(), table: 'identity_devices', idColumn: 'device_id', cutoff, signal });
      const delegations = await deleteEndedBefore({
        knex: knex(),
        table: 'identity_delegations',
        idColumn: 'delegation_id',
        cutoff,
        signal,
      });
      return { devices, delegations };
    },

    settings: deps.settings,

    /** The kernel's audit log (the `/audit/list` route reads it through `admin.listAuditEvents`). */
    audit: deps.audit,

    /** Listings across agents for operators (the `/admin/*` routes). */
    admin: createIdentityAdmin(deps),
  };
  return service;
}

/** The identity service. */
export type IdentityService = ReturnType<typeof createIdentityService>;
