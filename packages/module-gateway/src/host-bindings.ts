import { randomBytes } from 'node:crypto';
import {
  assertWithinQuota,
  ConflictError,
  chunks,
  isoTimestamp,
  NotFoundError,
  newId,
  SQL_ID_CHUNK,
  VerificationError,
} from '@agentinfra/core';
import { type GatewayContext, hostLockKey } from './gateway-context.js';
import { type CertificateRow, type ClaimRow, certificateKeyContext, type HostRow, type OrderRow } from './gateway-rows.js';
import { CLAIM_RECORD_PREFIX } from './hostname.js';
import { scheduleRevocation } from './revocation-schedule.js';
import type {
  AgentHostRequest,
  ClaimHostResponse,
  GetCertificateResponse,
  ListHostsResponse,
  ReleaseHostResponse,
  ReportIpsRequest,
  ReportIpsResponse,
} from './schemas.js';

const DAY_MS = 86_400_000;
/** Values shown back in a failed claim's `details.found`. */
const FOUND_VALUES_SHOWN = 10;

/** The columns of a host's latest order that /list shows. */
type ListedOrder = Pick<OrderRow, 'order_id' | 'host_id' | 'status' | 'attempts' | 'last_error' | 'problem' | 'updated_at'>;

/** Binding, releasing and describing hosts; proving control with a DNS TXT record. */
export function createHostBindings(context: GatewayContext) {
  const { deps, config } = context;
  const knex = () => deps.sql.knex;
  const now = () => deps.clock.now();

  async function bind(agentId: string, host: string): Promise<ClaimHostResponse> {
    const boundAt = now();
    const hostId = newId('hst_');
    try {
      await knex().transaction(async (trx) => {
        await deps.sql.lockInTransaction(trx, hostLockKey(host));
        await trx('gateway_hosts').insert({ host, host_id: hostId, agent_id: agentId, bound_at: boundAt, ips: '[]', ips_updated_at: null });
        await trx('gateway_claims').where({ host }).delete();
      });
    } catch (error) {
      if (!deps.sql.isUniqueViolation(error)) throw error;
      const winner = (await knex()('gateway_hosts').where({ host }).first()) as HostRow | undefined;
      if (winner && winner.agent_id === agentId) return bound(winner);
      throw new ConflictError(`Host "${host}" is bound to another agent.`);
    }
    return bound({ host, host_id: hostId, agent_id: agentId, bound_at: boundAt });
  }

  /**
   * `row`, when it binds the host to `agentId`.
   * @throws ConflictError when another agent holds the host.
   */
  const ownBinding = (row: HostRow, agentId: string): HostRow => {
    if (row.agent_id !== agentId) throw new ConflictError(`Host "${row.host}" is bound to another agent.`);
    return row;
  };

  const bound = (row: Pick<HostRow, 'host' | 'host_id' | 'agent_id' | 'bound_at'>): ClaimHostResponse => ({
    host: row.host,
    agent_id: row.agent_id,
    status: 'bound' as const,
    host_id: row.host_id,
    bound_at: isoTimestamp(row.bound_at),
  });

  /**
   * Stores a new claim (or replaces the agent's expired one for the same
   * host) unless the host is bound, or the agent already holds its quota
   * (setting `gateway_max_hosts_per_agent`) of bound hosts and unexpired
   * claims. The checks and the insert run in one transaction under the
   * agent's host-quota lock, so concurrent claims cannot pass the quota
   * together, and under the host's lock, which {@link bind} takes too: a
   * claim is never stored beside a binding made a moment earlier, where it
   * would take room in the quota until it expired. When a concurrent call
   * stored an unexpired claim of the same host first, that one is kept, so
   * both callers hand out the same token.
   * @returns the claim in force (`fresh`, or the one stored first), or the host's binding to this agent.
   * @throws ConflictError (409) when another agent holds the host, or with details `{ quota, used }` over the quota.
   */
  async function insertClaimWithinQuota(fresh: ClaimRow): Promise<{ claim: ClaimRow } | { bound: HostRow }> {
    const quota = await deps.settings.get<number>('gateway_max_hosts_per_agent');
    return knex().transaction(async (trx) => {
      await deps.sql.lockInTransaction(trx, `gateway:hosts:${fresh.agent_id}`);
      await deps.sql.lockInTransaction(trx, hostLockKey(fresh.host));
      const holder = (await trx('gateway_hosts').where({ host: fresh.host }).first()) as HostRow | undefined;
      if (holder) return { bound: ownBinding(holder, fresh.agent_id) };
      const current = (await trx('gateway_claims').where({ agent_id: fresh.agent_id, host: fresh.host }).first()) as ClaimRow | undefined;
      if (current && current.expires_at > fresh.created_at) return { claim: current };
      const bound = await trx('gateway_hosts').where({ agent_id: fresh.agent_id }).count({ n: '*' }).first();
      const claiming = await trx('gateway_claims')
        .where({ agent_id: fresh.agent_id })
        .andWhere('expires_at', '>', fresh.created_at)
        .whereNot({ host: fresh.host })
        .count({ n: '*' })
        .first();
      assertWithinQuota({
        agentId: fresh.agent_id,
        used: Number(bound?.n ?? 0) + Number(claiming?.n ?? 0),
        quota,
        what: 'hosts (bound, or claimed with an unexpired token)',
        setting: 'gateway_max_hosts_per_agent',
        release: 'release a bound one with /host/release, or wait for unverified claims to expire',
      });
      await trx('gateway_claims').insert(fresh).onConflict(['agent_id', 'host']).merge(['token', 'created_at', 'expires_at']);
      return { claim: fresh };
    });
  }

  return {
    /**
     * Binds `host` to `agent_id` once the TXT record
     * `_agentinfra-challenge.<host>` holds the agent's token, looked up
     * through the configured resolvers. The first call (or one after the
     * token expired) issues a token and fails with 422; a bound host
     * answers again as bound.
     * @throws ConflictError when another agent holds the host, or the agent holds its quota of hosts
     *   (setting `gateway_max_hosts_per_agent`, bound and being claimed);
     *   VerificationError with `details: { record_name, record_value, expires_at, found? }` until the record resolves.
     */
    async claim(body: AgentHostRequest): Promise<ClaimHostResponse> {
      const { agent_id: agentId, host } = body;
      const existing = (await knex()('gateway_hosts').where({ host }).first()) as HostRow | undefined;
      if (existing) return bound(ownBinding(existing, agentId));
      const recordName = `${CLAIM_RECORD_PREFIX}.${host}`;
      const at = now();
      const claim = (await knex()('gateway_claims').where({ agent_id: agentId, host }).first()) as ClaimRow | undefined;
      // A claim whose token expired no longer counts: claiming the host again takes room like a new host.
      if (!claim || claim.expires_at <= at) {
        const fresh: ClaimRow = {
          agent_id: agentId,
          host,
          token: randomBytes(32).toString('base64url'),
          created_at: at,
          expires_at: at + config.claimTokenTtlDays * DAY_MS,
        };
        const stored = await insertClaimWithinQuota(fresh);
        if ('bound' in stored) return bound(stored.bound);
        throw new VerificationError(
          `Publish a TXT record ${recordName} with the value in details.record_value, then call /host/claim again.`,
          {
            record_name: recordName,
            record_value: stored.claim.token,
            expires_at: isoTimestamp(stored.claim.expires_at),
          },
        );
      }
      const found = await context.txtLookup.lookup(recordName);
      if (found.ok && found.values.includes(claim.token)) return bind(agentId, host);
      const why = !found.ok
        ? `The TXT lookup of ${recordName} failed: ${found.reason}.`
        : found.values.length === 0
          ? `No TXT record ${recordName} was found.`
          : `The TXT record ${recordName} does not hold this agent's token.`;
      throw new VerificationError(`${why} Publish the value in details.record_value there, then call /host/claim again.`, {
        record_name: recordName,
        record_value: claim.token,
        expires_at: isoTimestamp(claim.expires_at),
        ...(found.ok ? { found: found.values.slice(0, FOUND_VALUES_SHOWN) } : { lookup_error: found.reason }),
      });
    },

    /**
     * Unbinds `host` from `agent_id`: cancels its open orders and schedules
     * the revocation of its certificate at the CA (reason cessationOfOperation).
     * @throws NotFoundError when the host is not bound to this agent.
     */
    async release(body: AgentHostRequest): Promise<ReleaseHostResponse> {
      const { agent_id: agentId, host } = body;
      const releasedAt = now();
      const cancelledJobs: string[] = [];
      let revocation = false;
      await knex().transaction(async (trx) => {
        await deps.sql.lockInTransaction(trx, hostLockKey(host));
        const row = (await trx('gateway_hosts').where({ host, agent_id: agentId }).first()) as HostRow | undefined;
        if (!row) throw new NotFoundError(`Host "${host}" is not bound to agent "${agentId}".`);
        await trx('gateway_hosts').where({ host }).delete();
        await trx('gateway_claims').where({ host }).delete();
        const open = (await trx('gateway_orders').where({ host }).whereIn('status', ['queued', 'processing'])) as OrderRow[];
        for (const order of open) if (order.job_id) cancelledJobs.push(order.job_id);
        await trx('gateway_orders').where({ host }).whereIn('status', ['queued', 'processing']).update({
          status: 'cancelled',
          active_host: null,
          finished_at: releasedAt,
          updated_at: releasedAt,
          last_error: 'The host was released.',
        });
        const certificate = (await trx('gateway_certificates').where({ host }).first()) as CertificateRow | undefined;
        if (certificate) {
          await trx('gateway_certificates').where({ host }).delete();
          await scheduleRevocation(
            deps.jobs,
            trx,
            {
              host,
              serial: certificate.serial,
              directoryUrl: certificate.directory_url,
              chainPem: certificate.chain_pem,
              orderId: certificate.order_id,
              keySealed: certificate.key_sealed,
            },
            releasedAt,
          );
          revocation = true;
        }
        if (cancelledJobs.length > 0) await deps.jobs.cancel({ ids: cancelledJobs, trx });
      });
      return {
        host,
        released_at: isoTimestamp(releasedAt),
        certificate_revocation: revocation ? ('scheduled' as const) : ('none' as const),
      };
    },

    /**
     * Replaces the IP addresses recorded for `host` (already normalised, deduplicated and sorted).
     * @throws NotFoundError when the host is not bound.
     */
    async reportIps(body: ReportIpsRequest): Promise<ReportIpsResponse> {
      const updated = await knex()('gateway_hosts')
        .where({ host: body.host })
        .update({ ips: JSON.stringify(body.ips), ips_updated_at: now() });
      if (updated === 0) throw new NotFoundError(`Host "${body.host}" is not bound to an agent.`);
      return { host: body.host, ips: [...body.ips] };
    },

    /**
     * The certificate of `host` with its private key, for the agent the host is bound to.
     * @throws NotFoundError when the host is not bound to `agent_id` or has no certificate yet.
     */
    async getCertificate(body: AgentHostRequest): Promise<GetCertificateResponse> {
      const row = (await knex()('gateway_certificates as c')
        .join('gateway_hosts as h', (join) => join.on('h.host', 'c.host').andOn('h.host_id', 'c.host_id'))
        .where({ 'c.host': body.host, 'h.agent_id': body.agent_id })
        .select('c.*')
        .first()) as CertificateRow | undefined;
      if (!row) throw new NotFoundError(`Host "${body.host}" has no certificate for agent "${body.agent_id}".`);
      return {
        host: row.host,
        certificate_pem: row.chain_pem,
        private_key_pem: deps.secretBox.open({ sealed: row.key_sealed, context: certificateKeyContext(row.order_id) }),
        not_before: isoTimestamp(row.not_before),
        not_after: isoTimestamp(row.not_after),
        serial: row.serial,
      };
    },

    /**
     * Bound hosts (all, one agent's, or those named in `hosts`) in name order,
     * with certificate expiry, status, IPs and their latest order. Reads one
     * row per host plus its latest order (found through the index
     * `(host_id, created_at, order_id)`), never a host's older orders, so the
     * cost grows with the number of hosts listed, not with their history.
     */
    async list(filter: { agent_id?: string | undefined; hosts?: readonly string[] }): Promise<ListHostsResponse> {
      const at = now();
      const latestOrderId = knex()('gateway_orders as o')
        .select('o.order_id')
        .whereRaw('?? = ??', ['o.host_id', 'h.host_id'])
        .orderBy([
          { column: 'o.created_at', order: 'desc' },
          { column: 'o.order_id', order: 'desc' },
        ])
        .limit(1)
        .as('latest_order_id');
      const query = knex()('gateway_hosts as h')
        .leftJoin('gateway_certificates as c', (join) => join.on('c.host', 'h.host').andOn('c.host_id', 'h.host_id'))
        .select('h.host', 'h.host_id', 'h.agent_id', 'h.bound_at', 'h.ips', 'c.not_after', 'c.not_before', 'c.serial', latestOrderId)
        .orderBy('h.host');
      if (filter.agent_id !== undefined) query.where('h.agent_id', filter.agent_id);
      if (filter.hosts !== undefined) query.whereIn('h.host', [...filter.hosts]);
      const rows = (await query) as Array<
        HostRow & { not_after: number | null; not_before: number | null; serial: string | null; latest_order_id: string | null }
      >;
      const latest = new Map<string, ListedOrder>();
      const orderIds = rows.flatMap((row) => (row.latest_order_id === null ? [] : [row.latest_order_id]));
      for (const slice of chunks(orderIds, SQL_ID_CHUNK)) {
        const orders = (await knex()('gateway_orders')
          .select('order_id', 'host_id', 'status', 'attempts', 'last_error', 'problem', 'updated_at')
          .whereIn('order_id', slice)) as ListedOrder[];
        for (const order of orders) latest.set(order.host_id, order);
      }
      return {
        hosts: rows.map((row) => {
          const order = latest.get(row.host_id);
          const live = order !== undefined && (order.status === 'queued' || order.status === 'processing');
          const notAfter = row.not_after === null ? null : Number(row.not_after);
          let certStatus: 'none' | 'pending' | 'valid' | 'renewing' | 'expired' | 'failed';
          if (notAfter !== null) certStatus = at >= notAfter ? 'expired' : live ? 'renewing' : 'valid';
          else certStatus = live ? 'pending' : order?.status === 'failed' ? 'failed' : 'none';
          return {
            host: row.host,
            agent_id: row.agent_id,
            cert_expires_at: notAfter === null ? null : isoTimestamp(notAfter),
            days_remaining: notAfter === null ? null : Math.floor((notAfter - at) / DAY_MS),
            ips: JSON.parse(row.ips) as string[],
            bound_at: isoTimestamp(row.bound_at),
            cert_status: certStatus,
            cert_serial: row.serial,
            order: order
              ? {
                  order_id: order.order_id,
                  status: order.status,
                  attempts: order.attempts,
                  error: order.last_error,
                  problem: order.problem === null ? null : (JSON.parse(order.problem) as unknown),
                  updated_at: isoTimestamp(order.updated_at),
                }
              : null,
          };
        }),
      };
    },

    /** Deletes claim tokens past their expiry. @returns how many. */
    async sweepClaims(): Promise<number> {
      return knex()('gateway_claims').where('expires_at', '<=', now()).delete();
    },
  };
}

/** The host-binding part of the gateway service. */
export type HostBindings = ReturnType<typeof createHostBindings>;
