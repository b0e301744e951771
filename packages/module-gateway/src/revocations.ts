import { JobInterruptedError, JobLeaseLostError } from '@agentinfra/core';
import { AcmeUnreachableError, captureAcmeProblems } from './acme/acme-http.js';
import { revokeWithCertificateKey } from './acme/certificate-key-revocation.js';
import { ACCOUNT_DOES_NOT_EXIST, AcmeProblemError, UNAUTHORIZED } from './acme/problem-document.js';
import { ERROR_TEXT_LIMIT, type GatewayContext, REVOKE_MAX_ATTEMPTS } from './gateway-context.js';
import { certificateKeyContext, type RevocationRow } from './gateway-rows.js';
import { revokeJobKey } from './revocation-schedule.js';

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
   * Asks the CA to revoke `leaf` with the server's account at the row's directory (registered there first when
   * none is stored). An account the CA no longer accepts (unknown, deactivated or revoked) is forgotten
   * ({@link GatewayContext.accounts}), so orders register a new one.
   * @returns null when the CA revoked the certificate (or had already); else the refusal, the account it was
   * signed for (null when the CA refused to register one), and whether the certificate's own key may get past it:
   * the CA refused the registration, or answered that this account may not (a successor of the account that
   * ordered it) or does not exist.
   * @throws AcmeUnreachableError when the CA did not answer.
   */
  async function revokeWithAccount(
    row: RevocationRow,
    leaf: string,
  ): Promise<{ refused: AcmeProblemError; accountUrl: string | null; keyMayPass: boolean } | null> {
    let client: Awaited<ReturnType<GatewayContext['accounts']['client']>>;
    try {
      client = await context.accounts.client(row.directory_url);
    } catch (error) {
      if (error instanceof AcmeProblemError) return { refused: error, accountUrl: null, keyMayPass: true };
      throw error;
    }
    const accountUrl = client.getAccountUrl();
    const refused = await attempt(`The CA refused to revoke the certificate of ${row.host}`, () =>
      client.revokeCertificate(leaf, { reason: row.reason }),
    );
    if (!refused) return null;
    await context.accounts.handleAccountGone({ error: refused, directoryUrl: row.directory_url, accountUrl });
    return { refused, accountUrl, keyMayPass: NOT_THIS_ACCOUNTS.has(refused.problem?.type ?? '') };
  }

  /**
   * Revokes the certificate of `row` with the server's account at its directory ({@link revokeWithAccount});
   * when the CA refuses to register that account, or answers that this account may not or does not exist,
   * signs the request with the certificate's own key instead, if the row keeps it (RFC 8555 §7.6: no account needed).
   * `signal` is checked before each request to the CA (their calls cannot be cancelled).
   * @throws AcmeProblemError with the CA's last refusal; AcmeUnreachableError when the CA did not answer;
   * the abort reason once `signal` aborted.
   */
  async function revoke(row: RevocationRow, signal: AbortSignal): Promise<void> {
    const leaf = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(row.chain_pem)?.[0] ?? row.chain_pem;
    signal.throwIfAborted();
    const byAccount = await revokeWithAccount(row, leaf);
    if (!byAccount) return;
    if (row.key_sealed === null || row.order_id === null || !byAccount.keyMayPass) throw byAccount.refused;
    signal.throwIfAborted();
    const keyPem = deps.secretBox.open({ sealed: row.key_sealed, context: certificateKeyContext(row.order_id) });
    const refusedAgain = await attempt(`The CA refused to revoke the certificate of ${row.host}, signed with its own key`, () =>
      revokeWithCertificateKey({ directoryUrl: row.directory_url, certificatePem: leaf, keyPem, reason: row.reason }),
    );
    if (refusedAgain) throw refusedAgain;
    logger.info(
      { host: row.host, serial: row.serial, account: byAccount.accountUrl, refused: byAccount.refused.message },
      'certificate revoked with its own key, not the account',
    );
  }

  return {
    /**
     * One attempt of the `gateway.revoke` job: revokes the certificate with
     * the account at its directory, or with the certificate's own key when
     * that account may not or the CA refuses to register one (see {@link revoke}). `alreadyRevoked` counts as
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

    /**
     * Ends the pending revocations whose `gateway.revoke` job will not run again (failed for good, e.g. its last
     * attempt's process died before recording anything, or deleted): each is marked failed and its sealed
     * certificate key dropped. A row from before job ids were kept finds its job by its dedupe key. Stops before the
     * next revocation once `signal` aborts.
     * @returns how many revocations were found dead.
     * @throws the abort reason once `signal` aborted.
     */
    async recover(signal?: AbortSignal): Promise<number> {
      const pending = (await knex()('gateway_revocations').where({ status: 'pending' })) as RevocationRow[];
      let dead = 0;
      for (const row of pending) {
        signal?.throwIfAborted();
        const job = await deps.jobs.get(row.job_id ? { id: row.job_id } : { dedupeKey: revokeJobKey(row.revocation_id) });
        if (job && (job.status === 'queued' || job.status === 'running')) continue;
        const ended = `The job running this revocation ended without finishing it: the certificate was not revoked, and its stored key is dropped.${
          row.last_error ? ` Last error: ${row.last_error}` : ''
        }`;
        const updated = await knex()('gateway_revocations')
          .where({ revocation_id: row.revocation_id, status: 'pending' })
          .update({ status: 'failed', key_sealed: null, last_error: ended.slice(0, ERROR_TEXT_LIMIT) });
        if (updated > 0) {
          dead += 1;
          logger.warn(
            { host: row.host, serial: row.serial, job: row.job_id, jobStatus: job?.status ?? null },
            'certificate revocation ended by its job',
          );
        }
      }
      return dead;
    },
  };
}

/** The revocation part of the gateway service. */
export type Revocations = ReturnType<typeof createRevocations>;
