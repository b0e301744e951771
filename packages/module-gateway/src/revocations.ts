import { captureAcmeProblems } from './acme/acme-http.js';
import { AcmeProblemError } from './acme/problem-document.js';
import { ERROR_TEXT_LIMIT, type GatewayContext, REVOKE_MAX_ATTEMPTS } from './gateway-context.js';
import type { RevocationRow } from './gateway-rows.js';

const ALREADY_REVOKED = 'urn:ietf:params:acme:error:alreadyRevoked';

/** Revocations at the CA (RFC 8555 §7.6), run by the `gateway.revoke` job. */
export function createRevocations(context: GatewayContext) {
  const { deps, logger } = context;
  const knex = () => deps.sql.knex;

  return {
    /**
     * One attempt of the `gateway.revoke` job: revokes the certificate with
     * the account that ordered it. `alreadyRevoked` counts as done.
     * Failures are recorded and rethrown (the runner retries with back-off).
     */
    async run(input: { revocationId: string; attempt: number }): Promise<void> {
      const row = (await knex()('gateway_revocations').where({ revocation_id: input.revocationId }).first()) as RevocationRow | undefined;
      if (row?.status !== 'pending') return;
      let accountUrl: string | null = null;
      try {
        const client = await context.accounts.client(row.directory_url);
        accountUrl = client.getAccountUrl();
        const leaf = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(row.chain_pem)?.[0] ?? row.chain_pem;
        await captureAcmeProblems(async (last) => {
          try {
            await client.revokeCertificate(leaf, { reason: row.reason });
          } catch (error) {
            const problem = last.problem();
            if (problem?.type === ALREADY_REVOKED) return;
            throw new AcmeProblemError(`The CA refused to revoke the certificate of ${row.host}`, problem, { cause: error });
          }
        });
        const at = deps.clock.now();
        await knex()('gateway_revocations')
          .where({ revocation_id: row.revocation_id })
          .update({ status: 'revoked', revoked_at: at, attempts: input.attempt, last_error: null });
        logger.info({ host: row.host, serial: row.serial }, 'certificate revoked');
      } catch (error) {
        if (accountUrl) await context.accounts.handleAccountGone({ error, directoryUrl: row.directory_url, accountUrl });
        const final = input.attempt >= REVOKE_MAX_ATTEMPTS;
        await knex()('gateway_revocations')
          .where({ revocation_id: row.revocation_id })
          .update({
            attempts: input.attempt,
            last_error: (error instanceof Error ? error.message : String(error)).slice(0, ERROR_TEXT_LIMIT),
            problem: error instanceof AcmeProblemError && error.problem ? JSON.stringify(error.problem) : null,
            ...(final ? { status: 'failed' } : {}),
          });
        logger.warn({ host: row.host, serial: row.serial, attempt: input.attempt, final, err: error }, 'certificate revocation failed');
        throw error;
      }
    },
  };
}

/** The revocation part of the gateway service. */
export type Revocations = ReturnType<typeof createRevocations>;
