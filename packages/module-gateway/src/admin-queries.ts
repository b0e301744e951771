import { createListCursor, keysetPage } from '@agentinfra/core';
import { z } from 'zod';
import type { AdminListHostsRequest, AdminListHostsResponse, AdminSummaryResponse } from './admin-schemas.js';
import type { GatewayDeps } from './gateway-context.js';
import type { HostBindings } from './host-bindings.js';

const DAY_MS = 86_400_000;
/** Days of certificate validity under which operators count a certificate as expiring soon. */
export const EXPIRING_SOON_DAYS = 14;

const hostCursor = createListCursor({ schema: z.strictObject({ h: z.string() }), field: 'cursor' });

const countOf = (row: unknown) => Number((row as { n: number | string } | undefined)?.n ?? 0);

/**
 * What operators list of the gateway (the console's reads): hosts page by
 * page, optionally only those whose certificate expires within some days,
 * described as /list describes them, and counts.
 */
export function createGatewayAdmin(deps: Pick<GatewayDeps, 'sql' | 'clock'>, hosts: Pick<HostBindings, 'list'>) {
  const knex = () => deps.sql.knex;
  return {
    /**
     * Bound hosts in name order, optionally one agent's, optionally only those
     * with a certificate that expires (or expired) within `expiring_within_days`.
     * @throws InputError for a cursor this list did not make.
     */
    async listHosts(input: AdminListHostsRequest): Promise<AdminListHostsResponse> {
      const query = knex()('gateway_hosts as h').select('h.host');
      if (input.agent_id !== undefined) query.where('h.agent_id', input.agent_id);
      if (input.expiring_within_days !== undefined) {
        query
          .join('gateway_certificates as c', (join) => join.on('c.host', 'h.host').andOn('c.host_id', 'h.host_id'))
          .where('c.not_after', '<=', deps.clock.now() + input.expiring_within_days * DAY_MS);
      }
      if (input.cursor !== null) query.where('h.host', '>', hostCursor.decode(input.cursor).h);
      const names = ((await query.orderBy('h.host').limit(input.limit + 1)) as Array<{ host: string }>).map((row) => row.host);
      const { page, next_cursor } = keysetPage(names, input.limit, (last) => hostCursor.encode({ h: last }));
      const described = page.length === 0 ? { hosts: [] } : await hosts.list({ hosts: page });
      return { hosts: described.hosts, next_cursor };
    },

    /** Counts: bound hosts, hosts with a certificate, certificates expiring within 14 days (not yet expired), expired ones. */
    async summary(): Promise<AdminSummaryResponse> {
      const at = deps.clock.now();
      const certificates = () =>
        knex()('gateway_certificates as c').join('gateway_hosts as h', (join) =>
          join.on('c.host', 'h.host').andOn('c.host_id', 'h.host_id'),
        );
      const [bound, certified, expiring, expired] = await Promise.all([
        knex()('gateway_hosts').count({ n: '*' }).first(),
        certificates().count({ n: '*' }).first(),
        certificates()
          .count({ n: '*' })
          .where('c.not_after', '>', at)
          .where('c.not_after', '<=', at + EXPIRING_SOON_DAYS * DAY_MS)
          .first(),
        certificates().count({ n: '*' }).where('c.not_after', '<=', at).first(),
      ]);
      return {
        hosts: countOf(bound),
        certificates: countOf(certified),
        expiring_soon: countOf(expiring),
        expired: countOf(expired),
        expiring_soon_days: EXPIRING_SOON_DAYS,
      };
    },
  };
}

/** The operator listings of agent-gateway (see {@link createGatewayAdmin}). */
export type GatewayAdmin = ReturnType<typeof createGatewayAdmin>;
