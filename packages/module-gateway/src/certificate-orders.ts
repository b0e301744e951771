import { type EnqueueOptions, JobInterruptedError, JobLeaseLostError, NotFoundError, newId } from '@agentinfra/core';
import { inspectCertificateChain } from './acme/certificate-chain.js';
import type { IssuedCertificate } from './acme/order-processor.js';
import { AcmeProblemError } from './acme/problem-document.js';
import { ERROR_TEXT_LIMIT, type GatewayContext, hostLockKey, ORDER_JOB } from './gateway-context.js';
import { type CertificateRow, certificateKeyContext, type HostRow, type OrderRow } from './gateway-rows.js';
import { scheduleRevocation } from './revocation-schedule.js';
import type { OrderSummary, RenewCertificatesRequest, RenewCertificatesResponse } from './schemas.js';

/** Finished orders are kept this long (ms, 30 days) before the daily sweep may delete them. */
const FINISHED_ORDER_RETENTION_MS = 30 * 86_400_000;

/** Orders deleted per statement by the sweep, so no statement holds a long write lock. */
const PRUNE_BATCH = 500;

const summary = (row: Pick<OrderRow, 'host' | 'order_id' | 'status'>): OrderSummary => ({
  host: row.host,
  order_id: row.order_id,
  status: row.status,
});

/** Resolves with `work`, or rejects with the abort reason as soon as `signal` aborts (`work`'s own failure is then handled, not reported). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Certificate orders as database state (cert-manager style): one live
 * order per host (`active_host` is unique), run by the `gateway.order`
 * job with retries and back-off; renewal of due certificates; recovery of
 * orders whose job died.
 */
export function createCertificateOrders(context: GatewayContext) {
  const { deps, config, logger } = context;
  const knex = () => deps.sql.knex;
  const now = () => deps.clock.now();

  /** Enqueues the job that runs an order (at most one: the dedupe key names the order) and records its id, inside `trx` when given. */
  async function dispatch(orderId: string, trx?: EnqueueOptions['trx']): Promise<void> {
    const { id } = await deps.jobs.enqueue({
      name: ORDER_JOB,
      payload: { order_id: orderId },
      dedupeKey: `${ORDER_JOB}:${orderId}`,
      maxAttempts: config.orderMaxAttempts,
      trx,
    });
    await (trx ?? knex())('gateway_orders').where({ order_id: orderId }).update({ job_id: id });
  }

  /**
   * Whether a live order still has a job that will run it. An order without
   * a job id (stored by a version that inserted and enqueued in two steps,
   * and crashed between them) is dispatched now.
   */
  async function ensureRunning(order: OrderRow): Promise<boolean> {
    if (order.job_id === null) {
      await dispatch(order.order_id);
      return true;
    }
    const job = await deps.jobs.get({ id: order.job_id });
    if (job && (job.status === 'queued' || job.status === 'running')) return true;
    const at = now();
    await knex()('gateway_orders')
      .where({ order_id: order.order_id })
      .whereIn('status', ['queued', 'processing'])
      .update({
        status: 'failed',
        active_host: null,
        finished_at: at,
        updated_at: at,
        last_error: order.last_error ?? 'The job running this order ended without finishing it.',
      });
    return false;
  }

  /**
   * Starts an order for a bound host, or returns the live one. The order is
   * for the host's binding when it is stored (under the host's lock), also
   * when the host was released and bound again since this call began. The
   * new order's `created_at` is the clock's time, or 1 ms after the
   * binding's latest order when that one is as new or newer, so orders of a
   * binding are created in `created_at` order.
   * @throws NotFoundError when the host is not bound.
   */
  async function request(host: string, reason: 'issue' | 'renew'): Promise<OrderSummary> {
    const binding = (await knex()('gateway_hosts').where({ host }).first()) as HostRow | undefined;
    if (!binding) throw new NotFoundError(`Host "${host}" is not bound to an agent; claim it first with /host/claim.`);
    const live = (await knex()('gateway_orders').where({ active_host: host }).first()) as OrderRow | undefined;
    if (live && (await ensureRunning(live))) return summary(live);
    const at = now();
    const row: OrderRow = {
      order_id: newId('ord_'),
      host,
      host_id: binding.host_id,
      agent_id: binding.agent_id,
      active_host: host,
      status: 'queued',
      reason,
      challenge: config.challenge,
      directory_url: config.directoryUrl,
      acme_order_url: null,
      key_sealed: null,
      job_id: null,
      attempts: 0,
      last_error: null,
      problem: null,
      created_at: at,
      updated_at: at,
      finished_at: null,
    };
    try {
      // The order and its job commit together: no order is left without a job, whatever fails. Under the host's
      // lock, so a release committing meanwhile is seen here and leaves no order behind for the released binding;
      // a binding made since the read above is the one ordered for.
      await knex().transaction(async (trx) => {
        await deps.sql.lockInTransaction(trx, hostLockKey(host));
        const current = (await trx('gateway_hosts').where({ host }).first()) as HostRow | undefined;
        if (!current) throw new NotFoundError(`Host "${host}" is not bound to an agent; claim it first with /host/claim.`);
        row.host_id = current.host_id;
        row.agent_id = current.agent_id;
        // After the binding's latest order also within its millisecond or once the clock stepped back, so the latest by
        // (created_at, order_id), which /list shows and the sweep keeps, is the order created last (ids are random).
        const latest = (await trx('gateway_orders').where({ host_id: current.host_id }).max({ at: 'created_at' }).first()) as
          | { at: number | string | null }
          | undefined;
        if (latest?.at != null) row.created_at = Math.max(at, Number(latest.at) + 1);
        await trx('gateway_orders').insert(row);
        await dispatch(row.order_id, trx);
      });
    } catch (error) {
      if (!deps.sql.isUniqueViolation(error)) throw error;
      const winner = (await knex()('gateway_orders').where({ active_host: host }).first()) as OrderRow | undefined;
      if (winner) return summary(winner);
      throw error;
    }
    return summary(row);
  }

  /**
   * The certificate key as the certificate row stores it: the order's sealed
   * key, sealed again under the current master key when it was sealed under
   * an older one (the reseal job may have run while the order held it).
   */
  function storedKey(order: OrderRow, issued: IssuedCertificate): string {
    if (!deps.secretBox.needsReseal(issued.keySealed)) return issued.keySealed;
    return deps.secretBox.seal({ plaintext: issued.keyPem, context: certificateKeyContext(order.order_id) });
  }

  /**
   * Stores the issued certificate, or revokes it at once when the host was released or re-bound meanwhile.
   * Runs under the host's lock, as release does: whichever commits second sees the other's work (a release
   * after the store revokes the stored certificate; a store after the release revokes the new one).
   * Nothing happens when the order already holds this certificate (another attempt stored it first).
   */
  async function store(order: OrderRow, issued: IssuedCertificate): Promise<void> {
    const facts = inspectCertificateChain({ chainPem: issued.chainPem, host: order.host, keyPem: issued.keyPem });
    const keySealed = storedKey(order, issued);
    const at = now();
    let revocationId: string | null = null;
    let stored = true;
    await knex().transaction(async (trx) => {
      await deps.sql.lockInTransaction(trx, hostLockKey(order.host));
      const current = (await trx('gateway_orders').where({ order_id: order.order_id }).first()) as OrderRow | undefined;
      const binding = (await trx('gateway_hosts').where({ host: order.host }).first()) as HostRow | undefined;
      const served = (await trx('gateway_certificates').where({ host: order.host }).first('order_id', 'serial')) as
        | Pick<CertificateRow, 'order_id' | 'serial'>
        | undefined;
      if (current?.status === 'valid' && served?.order_id === order.order_id && served.serial === facts.serial) {
        stored = false;
        return;
      }
      if (current?.status !== 'processing' || !binding || binding.host_id !== order.host_id) {
        revocationId = await scheduleRevocation(
          deps.jobs,
          trx,
          {
            host: order.host,
            serial: facts.serial,
            directoryUrl: order.directory_url,
            chainPem: issued.chainPem,
            orderId: order.order_id,
            keySealed,
          },
          at,
        );
        await trx('gateway_orders')
          .where({ order_id: order.order_id })
          .whereIn('status', ['queued', 'processing'])
          .update({ status: 'cancelled', active_host: null, key_sealed: null, finished_at: at, updated_at: at });
        return;
      }
      const values = {
        host: order.host,
        cert_id: newId('crt_'),
        host_id: order.host_id,
        agent_id: order.agent_id,
        order_id: order.order_id,
        directory_url: order.directory_url,
        chain_pem: issued.chainPem,
        key_sealed: keySealed,
        serial: facts.serial,
        not_before: facts.notBefore,
        not_after: facts.notAfter,
        issued_at: at,
      };
      await trx('gateway_certificates').insert(values).onConflict('host').merge();
      await trx('gateway_orders').where({ order_id: order.order_id }).update({
        status: 'valid',
        active_host: null,
        key_sealed: null,
        last_error: null,
        problem: null,
        finished_at: at,
        updated_at: at,
      });
    });
    if (!stored) logger.info({ host: order.host, order_id: order.order_id }, 'certificate already stored by another attempt');
    else if (revocationId)
      logger.info({ host: order.host, order_id: order.order_id }, 'host released during the order; revoking the new certificate');
    else
      logger.info({ host: order.host, order_id: order.order_id, not_after: new Date(facts.notAfter).toISOString() }, 'certificate stored');
  }

  return {
    request,

    /**
     * `{ host }`: forces an order for that host. No host: an order for every
     * certificate with less than a third of its lifetime left (the daily
     * job's path), skipping hosts with a live order (it is returned); when
     * `signal` aborts, stops before the next host (the orders already made stay).
     * @throws NotFoundError for a host that is not bound; the abort reason once `signal` aborted.
     */
    async renew(body: RenewCertificatesRequest, signal?: AbortSignal): Promise<RenewCertificatesResponse> {
      if (body.host !== undefined) return { orders: [await request(body.host, 'renew')] };
      const at = now();
      const due = (await knex()('gateway_certificates as c')
        .join('gateway_hosts as h', (join) => join.on('h.host', 'c.host').andOn('h.host_id', 'c.host_id'))
        .whereRaw('(c.not_after * 2 + c.not_before) <= ?', [at * 3])
        .select('c.host')
        .orderBy('c.not_after')) as Array<{ host: string }>;
      const orders: OrderSummary[] = [];
      for (const { host } of due) {
        signal?.throwIfAborted();
        try {
          orders.push(await request(host, 'renew'));
        } catch (error) {
          if (!(error instanceof NotFoundError)) throw error;
        }
      }
      return { orders };
    },

    /**
     * One attempt of the `gateway.order` job: advances the order at the CA
     * and stores the certificate. Failures are recorded with the CA's
     * problem document; the error is rethrown so the job runner retries
     * with back-off, except when retrying cannot help (the order is then failed).
     */
    async run(input: { orderId: string; attempt: number; signal: AbortSignal }): Promise<void> {
      const order = (await knex()('gateway_orders').where({ order_id: input.orderId }).first()) as OrderRow | undefined;
      if (!order || (order.status !== 'queued' && order.status !== 'processing')) return;
      const started = now();
      // Guarded: a release that cancelled the order since the read above is not undone.
      const claimed = await knex()('gateway_orders')
        .where({ order_id: order.order_id })
        .whereIn('status', ['queued', 'processing'])
        .update({ status: 'processing', attempts: input.attempt, updated_at: started });
      if (claimed === 0) return;
      order.status = 'processing';
      const signal = AbortSignal.any([input.signal, AbortSignal.timeout(config.orderTimeoutMs)]);
      try {
        await untilAborted(
          (async () => {
            const issued = await context.processor.advance(order, signal);
            // The CA's calls cannot be cancelled: an attempt that timed out meanwhile has been given up (the job
            // runner may already run the next one), so it stores nothing; the next attempt fetches the certificate.
            signal.throwIfAborted();
            await store(order, issued);
          })(),
          signal,
        );
      } catch (error) {
        const stopped: unknown = input.signal.reason;
        // The queue stopped this attempt (a shutdown, which does not count it, or its lease went to another worker):
        // the attempt that carries on records the outcome, so this one neither records an error nor fails the order.
        if (stopped instanceof JobInterruptedError || stopped instanceof JobLeaseLostError) throw stopped;
        const problem = error instanceof AcmeProblemError ? error.problem : null;
        const permanent = error instanceof AcmeProblemError && error.permanent;
        const final = permanent || input.attempt >= config.orderMaxAttempts;
        const at = now();
        await knex()('gateway_orders')
          .where({ order_id: order.order_id })
          .where('status', 'processing')
          .update({
            last_error: (error instanceof Error ? error.message : String(error)).slice(0, ERROR_TEXT_LIMIT),
            problem: problem === null ? null : JSON.stringify(problem),
            updated_at: at,
            ...(final ? { status: 'failed', active_host: null, finished_at: at } : {}),
          });
        logger.warn(
          { host: order.host, order_id: order.order_id, attempt: input.attempt, final, problem: problem?.type, err: error },
          final ? 'certificate order failed' : 'certificate order attempt failed; retrying',
        );
        if (permanent) return;
        throw error;
      }
    },

    /**
     * Deletes finished orders (valid, failed, cancelled) that ended more than
     * {@link FINISHED_ORDER_RETENTION_MS} ago and that /list no longer shows:
     * a newer order of the same host binding exists, or the host was released.
     * Each bound host keeps its latest order whatever its age. Their sealed
     * certificate keys go with them (a stored certificate keeps its own copy).
     * Stops before the next batch once `signal` aborts.
     * @returns how many orders were deleted.
     * @throws the abort reason once `signal` aborted.
     */
    async pruneFinished(signal?: AbortSignal): Promise<number> {
      const endedBefore = now() - FINISHED_ORDER_RETENTION_MS;
      let deleted = 0;
      for (;;) {
        signal?.throwIfAborted();
        const ids = (
          (await knex()('gateway_orders as o')
            .select('o.order_id')
            .whereIn('o.status', ['valid', 'failed', 'cancelled'])
            .where('o.finished_at', '<', endedBefore)
            .where((superseded) =>
              superseded
                .whereNotExists(knex()('gateway_hosts as h').select(knex().raw('1')).whereRaw('?? = ??', ['h.host_id', 'o.host_id']))
                .orWhereExists(
                  knex()('gateway_orders as n')
                    .select(knex().raw('1'))
                    .whereRaw('?? = ??', ['n.host_id', 'o.host_id'])
                    .whereRaw('(??, ??) > (??, ??)', ['n.created_at', 'n.order_id', 'o.created_at', 'o.order_id']),
                ),
            )
            .limit(PRUNE_BATCH)) as Array<{ order_id: string }>
        ).map((row) => row.order_id);
        if (ids.length === 0) return deleted;
        deleted += await knex()('gateway_orders').whereIn('order_id', ids).delete();
      }
    },

    /**
     * Checks every live order still has a running job (re-enqueues or fails the others); stops before the next
     * order once `signal` aborts. @returns orders found dead. @throws the abort reason once `signal` aborted.
     */
    async recover(signal?: AbortSignal): Promise<number> {
      const live = (await knex()('gateway_orders').whereIn('status', ['queued', 'processing'])) as OrderRow[];
      let dead = 0;
      for (const order of live) {
        signal?.throwIfAborted();
        if (!(await ensureRunning(order))) dead += 1;
      }
      return dead;
    },
  };
}

/** The order part of the gateway service. */
export type CertificateOrders = ReturnType<typeof createCertificateOrders>;
