import { createListCursor, isoTimestamp, keysetPage, NotFoundError, whereAfterKeyset } from '@agentinfra/core';
import { z } from 'zod';
import type {
  AdminAgentPageRequest,
  AdminGetAgentRequest,
  AdminGetAgentResponse,
  AdminListAgentsRequest,
  AdminListAgentsResponse,
  AdminListDelegationsResponse,
  AdminListDevicesResponse,
  AdminSummaryResponse,
  AuditListRequest,
  AuditListResponse,
  CredentialState,
} from './admin-schemas.js';
import { nameSearchForm } from './name-search.js';
import type { IdentityDeps } from './service.js';

const agentCursor = createListCursor({ schema: z.strictObject({ a: z.string() }), field: 'cursor' });
const createdCursor = createListCursor({ schema: z.strictObject({ c: z.int(), i: z.string() }), field: 'cursor' });

/** `%`, `_` and `\` escaped for a `LIKE … ESCAPE '\'` pattern. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

const stateOf = (row: { expires_at: number | string; revoked_at: number | string | null }, now: number): CredentialState =>
  row.revoked_at !== null ? 'revoked' : Number(row.expires_at) <= now ? 'expired' : 'active';

const countOf = (row: unknown) => Number((row as { n: number | string } | undefined)?.n ?? 0);

/**
 * What operators list across agents (the console's reads): agents with
 * search, one agent's devices, delegations and teams, service-wide counts,
 * and the audit log. Keyset pagination: every list returns `next_cursor` (null on the
 * last page), which the caller passes back as `cursor`.
 */
export function createIdentityAdmin(deps: IdentityDeps) {
  const knex = () => deps.sql.knex;

  async function requireAgent(agentId: string) {
    const row = (await knex()('identity_agents').where({ agent_id: agentId }).first()) as
      | { agent_id: string; display_name: string; created_at: number | string }
      | undefined;
    if (!row) throw new NotFoundError(`Agent "${agentId}" does not exist.`);
    return row;
  }

  return {
    /**
     * Agents in id order, optionally those whose id or display name contains
     * `query` (case-insensitive with full Unicode case mapping, on every
     * engine; `%`, `_` and `\` are literal), with their active device count.
     * @throws InputError for a cursor this list did not make.
     */
    async listAgents(input: AdminListAgentsRequest): Promise<AdminListAgentsResponse> {
      const now = deps.clock.now();
      const query = knex()('identity_agents').select('agent_id', 'display_name', 'created_at');
      if (input.query) {
        // Both sides folded by JavaScript, not SQL lower() (ASCII-only on SQLite): agent ids are ASCII, display names are
        // compared in their stored search form (lower(display_name) only for a row an older process wrote without it).
        const pattern = `%${likeLiteral(nameSearchForm(input.query))}%`;
        query.where((where) =>
          where
            .whereRaw(`lower(agent_id) like ? escape '\\'`, [pattern])
            .orWhereRaw(`coalesce(display_name_search, lower(display_name)) like ? escape '\\'`, [pattern]),
        );
      }
      if (input.cursor !== null) query.where('agent_id', '>', agentCursor.decode(input.cursor).a);
      const rows = (await query.orderBy('agent_id').limit(input.limit + 1)) as Array<{
        agent_id: string;
        display_name: string;
        created_at: number | string;
      }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) => agentCursor.encode({ a: last.agent_id }));
      const devices = new Map<string, number>();
      if (page.length > 0) {
        const counts = (await knex()('identity_devices')
          .select('agent_id')
          .count({ n: '*' })
          .whereIn(
            'agent_id',
            page.map((row) => row.agent_id),
          )
          .whereNull('revoked_at')
          .where('expires_at', '>', now)
          .groupBy('agent_id')) as Array<{ agent_id: string; n: number | string }>;
        for (const row of counts) devices.set(row.agent_id, Number(row.n));
      }
      return {
        agents: page.map((row) => ({
          agent_id: row.agent_id,
          display_name: row.display_name,
          created_at: isoTimestamp(Number(row.created_at)),
          active_devices: devices.get(row.agent_id) ?? 0,
        })),
        next_cursor,
      };
    },

    /**
     * One agent with its teams and counts of active devices and delegations.
     * @throws NotFoundError when the agent does not exist.
     */
    async getAgent(input: AdminGetAgentRequest): Promise<AdminGetAgentResponse> {
      const now = deps.clock.now();
      const row = await requireAgent(input.agent_id);
      const [teams, devices, delegations, secrets] = await Promise.all([
        knex()('identity_team_members').select('team').where({ agent_id: input.agent_id }).orderBy('team'),
        knex()('identity_devices')
          .count({ n: '*' })
          .where({ agent_id: input.agent_id })
          .whereNull('revoked_at')
          .where('expires_at', '>', now)
          .first(),
        knex()('identity_delegations')
          .count({ n: '*' })
          .where((where) => where.where({ from_agent: input.agent_id }).orWhere({ to_agent: input.agent_id }))
          .whereNull('revoked_at')
          .where('expires_at', '>', now)
          .first(),
        knex()('identity_secrets').count({ n: '*' }).where({ agent_id: input.agent_id }).first(),
      ]);
      return {
        agent_id: row.agent_id,
        display_name: row.display_name,
        created_at: isoTimestamp(Number(row.created_at)),
        teams: (teams as Array<{ team: string }>).map((team) => team.team),
        active_devices: countOf(devices),
        active_delegations: countOf(delegations),
        secrets: countOf(secrets),
      };
    },

    /**
     * An agent's devices, newest first, with their state (never a key or its hash).
     * @throws NotFoundError when the agent does not exist; InputError for a foreign cursor.
     */
    async listDevices(input: AdminAgentPageRequest): Promise<AdminListDevicesResponse> {
      await requireAgent(input.agent_id);
      const now = deps.clock.now();
      const query = knex()('identity_devices')
        .select('device_id', 'label', 'created_at', 'expires_at', 'revoked_at')
        .where({ agent_id: input.agent_id });
      if (input.cursor !== null) {
        const after = createdCursor.decode(input.cursor);
        whereAfterKeyset(query, 'desc', ['created_at', after.c], ['device_id', after.i]);
      }
      const rows = (await query
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'device_id', order: 'desc' },
        ])
        .limit(input.limit + 1)) as Array<{
        device_id: string;
        label: string;
        created_at: number | string;
        expires_at: number | string;
        revoked_at: number | string | null;
      }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) =>
        createdCursor.encode({ c: Number(last.created_at), i: last.device_id }),
      );
      return {
        devices: page.map((row) => ({
          device_id: row.device_id,
          label: row.label,
          created_at: isoTimestamp(Number(row.created_at)),
          expires_at: isoTimestamp(Number(row.expires_at)),
          revoked_at: row.revoked_at === null ? null : isoTimestamp(Number(row.revoked_at)),
          state: stateOf(row, now),
        })),
        next_cursor,
      };
    },

    /**
     * Delegations from or to an agent, newest first, with their state (never a token or its hash).
     * @throws NotFoundError when the agent does not exist; InputError for a foreign cursor.
     */
    async listDelegations(input: AdminAgentPageRequest): Promise<AdminListDelegationsResponse> {
      await requireAgent(input.agent_id);
      const now = deps.clock.now();
      const query = knex()('identity_delegations')
        .select('delegation_id', 'from_agent', 'to_agent', 'scope', 'created_at', 'expires_at', 'revoked_at')
        .where((where) => where.where({ from_agent: input.agent_id }).orWhere({ to_agent: input.agent_id }));
      if (input.cursor !== null) {
        const after = createdCursor.decode(input.cursor);
        whereAfterKeyset(query, 'desc', ['created_at', after.c], ['delegation_id', after.i]);
      }
      const rows = (await query
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'delegation_id', order: 'desc' },
        ])
        .limit(input.limit + 1)) as Array<{
        delegation_id: string;
        from_agent: string;
        to_agent: string;
        scope: string;
        created_at: number | string;
        expires_at: number | string;
        revoked_at: number | string | null;
      }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) =>
        createdCursor.encode({ c: Number(last.created_at), i: last.delegation_id }),
      );
      return {
        delegations: page.map((row) => ({
          delegation_id: row.delegation_id,
          from_agent: row.from_agent,
          to_agent: row.to_agent,
          scope: JSON.parse(row.scope) as string[],
          created_at: isoTimestamp(Number(row.created_at)),
          expires_at: isoTimestamp(Number(row.expires_at)),
          revoked_at: row.revoked_at === null ? null : isoTimestamp(Number(row.revoked_at)),
          state: stateOf(row, now),
        })),
        next_cursor,
      };
    },

    /** Service-wide counts: agents, active devices, active delegations. */
    async summary(): Promise<AdminSummaryResponse> {
      const now = deps.clock.now();
      const [agents, devices, delegations] = await Promise.all([
        knex()('identity_agents').count({ n: '*' }).first(),
        knex()('identity_devices').count({ n: '*' }).whereNull('revoked_at').where('expires_at', '>', now).first(),
        knex()('identity_delegations').count({ n: '*' }).whereNull('revoked_at').where('expires_at', '>', now).first(),
      ]);
      return { agents: countOf(agents), active_devices: countOf(devices), active_delegations: countOf(delegations) };
    },

    /**
     * Audit events newest first, of the agent (events it did or that
     * concern it), of the action or actions, in `[since, until)`.
     * @throws InputError for a cursor this list did not make.
     */
    listAuditEvents(input: AuditListRequest): Promise<AuditListResponse> {
      return deps.audit.list({
        agentId: input.agent_id,
        actions: input.action === undefined ? undefined : typeof input.action === 'string' ? [input.action] : input.action,
        since: input.since,
        until: input.until,
        limit: input.limit,
        cursor: input.cursor,
      });
    },
  };
}

/** The operator listings of agent-identity (see {@link createIdentityAdmin}). */
export type IdentityAdmin = ReturnType<typeof createIdentityAdmin>;
