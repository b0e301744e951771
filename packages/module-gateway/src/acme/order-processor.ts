import type { Clock, SecretBox, SqlDatabase } from '@agentinfra/core';
import type acme from 'acme-client';
import type { CertificateKeyType } from '../config.js';
import { certificateKeyContext, type OrderRow } from '../gateway-rows.js';
import type { AcmeAccounts } from './acme-accounts.js';
import { captureAcmeProblems, type LastAcmeAnswer } from './acme-http.js';
import { createCertificateKey, createCertificateRequest } from './certificate-keys.js';
import type { ChallengeResponder } from './challenge-responders.js';
import { ACCOUNT_DOES_NOT_EXIST, type AcmeProblem, AcmeProblemError, asAcmeProblem } from './problem-document.js';

/** A certificate an order produced, with the private key it was requested for. */
export interface IssuedCertificate {
  chainPem: string;
  keyPem: string;
  /** The sealed key as stored in the order (moved to the certificate row, resealed first if it was sealed under an older master key). */
  keySealed: string;
}

/** Drives one order at the CA to an issued certificate. */
export interface OrderProcessor {
  /**
   * Resumes the ACME order stored in `order` (or creates one) and walks it
   * through authorization, finalization and download (RFC 8555 §7.4).
   * Progress is written to the order row as it happens (the CA's order URL,
   * the sealed certificate key before finalization), so an attempt cut
   * short by a restart resumes the same ACME order. An order the CA marked
   * invalid or no longer knows is forgotten, so the next attempt starts a
   * new one. When the CA no longer accepts the account (it does not exist,
   * or it was deactivated or revoked), the account is forgotten too
   * ({@link AcmeAccounts.handleAccountGone}) and the next attempt registers
   * a new one.
   * @throws AcmeProblemError with the CA's problem document; Error for network or local failures.
   */
  advance(order: OrderRow, signal: AbortSignal): Promise<IssuedCertificate>;
}

type AcmeOrder = acme.Order;
type AcmeAuthorization = acme.Authorization;

const ORDER_NOT_READY = 'urn:ietf:params:acme:error:orderNotReady';

/** Builds the {@link OrderProcessor}. */
export function createOrderProcessor(deps: {
  sql: SqlDatabase;
  secretBox: SecretBox;
  clock: Clock;
  accounts: AcmeAccounts;
  responder: ChallengeResponder;
  keyType: CertificateKeyType;
}): OrderProcessor {
  const knex = () => deps.sql.knex('gateway_orders');
  const touch = (orderId: string, values: Partial<OrderRow>) =>
    knex()
      .where({ order_id: orderId })
      .update({ ...values, updated_at: deps.clock.now() });

  /** Drops the CA order from the row (it is invalid), so the next attempt starts a new one at once. */
  async function forget(row: OrderRow): Promise<void> {
    row.acme_order_url = null;
    row.key_sealed = null;
    await touch(row.order_id, { acme_order_url: null, key_sealed: null });
  }

  /** The CA's order at `url`, or null when the CA answers 404 (it purged the order, or lost its state). */
  async function fetchOrder(client: acme.Client, url: string, last: LastAcmeAnswer): Promise<AcmeOrder | null> {
    try {
      return await client.getOrder({ url } as AcmeOrder);
    } catch (error) {
      if (last.status() === 404 && last.problem()?.type !== ACCOUNT_DOES_NOT_EXIST) return null;
      throw error;
    }
  }

  /** The problem document that explains a failed order: the order's own `error`, else the first failed challenge's. */
  async function problemOf(client: acme.Client, order: AcmeOrder): Promise<AcmeProblem | null> {
    const own = asAcmeProblem((order as { error?: unknown }).error);
    if (own) return own;
    try {
      for (const authz of await client.getAuthorizations(order)) {
        for (const challenge of authz.challenges) {
          const problem = asAcmeProblem((challenge as { error?: unknown }).error);
          if (problem) return problem;
        }
      }
    } catch {
      return null;
    }
    return null;
  }

  async function authorize(client: acme.Client, order: AcmeOrder, row: OrderRow, signal: AbortSignal): Promise<void> {
    const authorizations: AcmeAuthorization[] = await client.getAuthorizations(order);
    for (const authz of authorizations) {
      if (authz.status === 'valid') continue;
      if (authz.status !== 'pending') {
        throw new AcmeProblemError(`The CA marked the authorization for ${row.host} ${authz.status}`, await problemOf(client, order));
      }
      const challenge = authz.challenges.find((candidate) => candidate.type === deps.responder.type);
      if (!challenge) {
        const offered = authz.challenges.map((candidate) => candidate.type).join(', ');
        throw new AcmeProblemError(`The CA offers no ${deps.responder.type} challenge for ${row.host} (offered: ${offered})`, null);
      }
      const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
      const cleanup = await deps.responder.provision({
        orderId: row.order_id,
        host: row.host,
        token: challenge.token,
        keyAuthorization,
        signal,
      });
      try {
        signal.throwIfAborted();
        if (challenge.status === 'pending') await client.completeChallenge(challenge);
        await client.waitForValidStatus(authz);
      } catch (error) {
        if (signal.aborted) throw error;
        const problem = await problemOf(client, order);
        await forget(row);
        throw new AcmeProblemError(`The ${deps.responder.type} challenge for ${row.host} failed`, problem, { cause: error });
      } finally {
        await cleanup().catch(() => undefined);
      }
    }
  }

  async function certificateKey(row: OrderRow): Promise<{ keyPem: string; keySealed: string }> {
    const context = certificateKeyContext(row.order_id);
    if (row.key_sealed) return { keyPem: deps.secretBox.open({ sealed: row.key_sealed, context }), keySealed: row.key_sealed };
    const keyPem = await createCertificateKey(deps.keyType);
    const keySealed = deps.secretBox.seal({ plaintext: keyPem, context });
    await touch(row.order_id, { key_sealed: keySealed });
    row.key_sealed = keySealed;
    return { keyPem, keySealed };
  }

  /** Finalizes a ready order; when the CA says it is not ready yet, waits for it and finalizes again. */
  async function finalize(client: acme.Client, order: AcmeOrder, csr: string, row: OrderRow, last: LastAcmeAnswer): Promise<AcmeOrder> {
    try {
      return { ...(await client.finalizeOrder(order, csr)), url: order.url };
    } catch (error) {
      if (last.problem()?.type !== ORDER_NOT_READY) throw error;
      const ready = await waitFor(client, order, row, last);
      if (ready.status !== 'ready') return ready;
      return { ...(await client.finalizeOrder(ready, csr)), url: order.url };
    }
  }

  async function run(client: acme.Client, row: OrderRow, signal: AbortSignal, last: LastAcmeAnswer): Promise<IssuedCertificate> {
    let order = row.acme_order_url ? await fetchOrder(client, row.acme_order_url, last) : null;
    if (order && (order.status === 'invalid' || (order.status === 'valid' && !row.key_sealed))) {
      const problem = order.status === 'invalid' ? await problemOf(client, order) : null;
      await forget(row);
      throw new AcmeProblemError(`The CA's order for ${row.host} is ${order.status}; the next attempt starts a new one`, problem);
    }
    if (!order) {
      order = await client.createOrder({ identifiers: [{ type: 'dns', value: row.host }] });
      row.acme_order_url = order.url;
      row.key_sealed = null;
      await touch(row.order_id, { acme_order_url: order.url, key_sealed: null });
    }
    signal.throwIfAborted();
    if (order.status === 'pending') {
      await authorize(client, order, row, signal);
      // Every authorization is valid now, so the order is ready (RFC 8555 §7.1.6): finalize without
      // another poll, and wait only if the CA answers orderNotReady.
      order = { ...order, status: 'ready' };
    }
    signal.throwIfAborted();
    let key: { keyPem: string; keySealed: string } | null = null;
    if (order.status === 'ready') {
      key = await certificateKey(row);
      const csr = await createCertificateRequest({ host: row.host, keyPem: key.keyPem });
      order = await finalize(client, order, csr, row, last);
    }
    if (order.status === 'processing') order = await waitFor(client, order, row, last);
    if (order.status !== 'valid') {
      throw new AcmeProblemError(`The CA's order for ${row.host} is ${order.status}`, await problemOf(client, order));
    }
    key ??= await certificateKey(row);
    const chainPem = await client.getCertificate(order);
    return { chainPem, ...key };
  }

  /** Polls the order until it is ready or valid; keeps its URL (acme-client returns the bare resource). */
  async function waitFor(client: acme.Client, order: AcmeOrder, row: OrderRow, last: LastAcmeAnswer): Promise<AcmeOrder> {
    try {
      return { ...(await client.waitForValidStatus(order)), url: order.url };
    } catch (error) {
      const current = await fetchOrder(client, order.url, last);
      if (current?.status === 'invalid') await forget(row);
      throw new AcmeProblemError(`The CA's order for ${row.host} did not become valid`, current ? await problemOf(client, current) : null, {
        cause: error,
      });
    }
  }

  /** `error` with the problem document of the CA's latest answer attached, when it has none of its own. */
  function withProblem(error: unknown, last: LastAcmeAnswer): unknown {
    if (error instanceof AcmeProblemError) {
      return error.problem !== null ? error : new AcmeProblemError(error.message, last.problem(), { cause: error.cause ?? error });
    }
    const problem = last.problem();
    return problem ? new AcmeProblemError((error as Error).message, problem, { cause: error }) : error;
  }

  return {
    advance(order, signal) {
      return captureAcmeProblems(async (last) => {
        const row = { ...order };
        let accountUrl: string | null = null;
        try {
          const client = await deps.accounts.client(row.directory_url);
          accountUrl = client.getAccountUrl();
          return await run(client, row, signal, last);
        } catch (error) {
          const failure = withProblem(error, last);
          if (accountUrl && (await deps.accounts.handleAccountGone({ error: failure, directoryUrl: row.directory_url, accountUrl }))) {
            await forget(row);
          }
          throw failure;
        }
      });
    },
  };
}
