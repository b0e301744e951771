import { JobInterruptedError, JobLeaseLostError } from '@agentinfra/core';
import { AcmeUnreachableError, captureAcmeProblems } from './acme/acme-http.js';
import { revokeWithCertificateKey } from './acme/certificate-key-revocation.js';
import { ACCOUNT_DOES_NOT_EXIST, AcmeProblemError, UNAUTHORIZED } from './acme/problem-document.js';
import { ERROR_TEXT_LIMIT, type GatewayContext, REVOKE_MAX_ATTEMPTS } from './gateway-context.js';
import { certificateKeyContext, type RevocationRow } from './gateway-rows.js';

const ALREADY_REVOKED = 'urn:ietf:params:acme:error:alreadyRevoked';
/**
 * The CA's refusals of an account-signed revocation that the certificate's own key can get past: the account
 * neither ordered the certificate nor holds authorizations for its names, or the CA no longer knows the account.
 */
const NOT_THIS_ACCOUNTS = new Set([UNAUTHORIZED, ACCOUNT_DOES_NOT_EXIST]);

/** Revocations at the CA (RFC 8555 §7.6), run by the `gateway.revoke` job. */
export function createRevocations(context: GatewayContext) {
  const { deps, logger } = context;
  const knex = () => deps.sql.knex;

  /**
   * Runs one revocation request. @returns null when the CA revoked the certificate (or had already),
   * else the refusal as an AcmeProblemError saying `what` was refused.
   * @throws AcmeUnreachableError when the CA did not answer.
   */
  const attempt = (what: string, request: () => Promise<unknown>): Promise<AcmeProblemError | null> =>
    captureAcmeProblems(async (last) => {
      try {
        await request();
        return null;
      } catch (error) {
        if (error instanceof AcmeUnreachableError) throw error;
        const problem = last.problem();
        if (problem?.type === ALREADY_REVOKED) return null;
        return new AcmeProblemError(what, problem, { cause: error });
      }
    });

  /**
   * Revokes the certificate of `row` with the server's account at its directory; when the CA answers that this
   * account may not (a successor of the account that ordered it) or does not exist, signs the request with the
   * certificate's own key instead, if the row keeps it. An account the CA no longer accepts (unknown, deactivated or
   * revoked) is also forgotten ({@link GatewayContext.accounts}), so orders register a new one.
   * `signal` is checked before each request to the CA (their calls cannot be cancelled).
   * @throws AcmeProblemError with the CA's last refusal; the abort reason once `signal` aborted.
   */
  async function revoke(row: RevocationRow, signal: AbortSignal): Promise<void> {
    const leaf = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(row.chain_pem)?.[0] ?? row.chain_pem;
    signal.throwIfAborted();
    const client = await context.accounts.client(row.directory_url);
    const accountUrl = client.getAccountUrl();
    const refused = await attempt(`The CA refused to revoke the certificate of ${row.host}`, () =>
      client.revokeCertificate(leaf, { reason: row.reason }),
    );
    if (!refused) return;
    await context.accounts.handleAccountGone({ error: refused, directoryUrl: row.directory_url, accountUrl });
    if (row.key_sealed === null || row.order_id === null || !NOT_THIS_ACCOUNTS.has(refused.problem?.type ?? '')) throw refused;
    signal.throwIfAborted();
    const keyPem = deps.secretBox.open({ sealed: row.key_sealed, context: certificateKeyContext(row.order_id) });
    const refusedAgain = await attempt(`The CA refused to revoke the certificate of ${row.host}, signed with its own key`, () =>
      revokeWithCertificateKey({ directoryUrl: row.directory_url, certificatePem: leaf, keyPem, reason: row.reason }),
    );
    if (refusedAgain) throw refusedAgain;
    logger.info({ host: row.host, serial: row.serial, account: accountUrl }, 'certificate revoked with its own key, not the account');
  }

  return {
    /**
     * One attempt of the `gateway.revoke` job: revokes the certificate with
     * the account at its directory, or with the certificate's own key when
     * that account may not (see {@link revoke}). `alreadyRevoked` counts as
     * done. The stored certificate key is dropped once the revocation is done
     * or failed for good. Failures are recorded and rethrown (the runner
     * retries with back-off). Stops between its requests to the CA once
     * `signal` aborts; an attempt the queue stopped (a shutdown, or its
     * lease went to another worker) records nothing, as the attempt that
     * carries on does.
     * @throws the failure, or the abort reason once `signal` aborted.
     */
    async run(input: { revocationId: string; attempt: number; signal: AbortSignal }): Promise<void> {
      const row = (await knex()('gateway_revocations').where({ revocation_id: input.revocationId }).first()) as RevocationRow | undefined;
      if (row?.status !== 'pending') return;
      try {
        await revoke(row, input.signal);
        const at = deps.clock.now();
        await knex()('gateway_revocations')
          .where({ revocation_id: row.revocation_id })
          .update({ status: 'revoked', revoked_at: at, attempts: input.attempt, last_error: null, key_sealed: null });
        logger.info({ host: row.host, serial: row.serial }, 'certificate revoked');
      } catch (error) {
        const stopped: unknown = input.signal.reason;
        if (stopped instanceof JobInterruptedError || stopped instanceof JobLeaseLostError) throw stopped;
        const final = input.attempt >= REVOKE_MAX_ATTEMPTS;
        await knex()('gateway_revocations')
          .where({ revocation_id: row.revocation_id })
          .update({
            attempts: input.attempt,
            last_error: (error instanceof Error ? error.message : String(error)).slice(0, ERROR_TEXT_LIMIT),
            problem: error instanceof AcmeProblemError && error.problem ? JSON.stringify(error.problem) : null,
            ...(final ? { status: 'failed', key_sealed: null } : {}),
          });
        logger.warn({ host: row.host, serial: row.serial, attempt: input.attempt, final, err: error }, 'certificate revocation failed');
        throw error;
      }
    },
  };
}

/** The revocation part of the gateway service. */
export type Revocations = ReturnType<typeof createRevocations>;
