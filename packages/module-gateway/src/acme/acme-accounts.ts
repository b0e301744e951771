import type { Clock, PortMap, SecretBox, SqlDatabase } from '@agentinfra/core';
import type acme from 'acme-client';
import type { GatewayConfig } from '../config.js';
import { type AccountRow, accountKeyContext } from '../gateway-rows.js';
import { AcmeUnreachableError, acmeClient, captureAcmeProblems } from './acme-http.js';
import { ACCOUNT_DOES_NOT_EXIST, AcmeProblemError, asAcmeProblem, UNAUTHORIZED } from './problem-document.js';

type Logger = PortMap['logger'];

/** Account statuses after which the CA accepts no request signed for the account (RFC 8555 §7.1.2). */
const UNUSABLE_STATUSES: ReadonlySet<string> = new Set(['deactivated', 'revoked']);

/** ACME clients bound to this server's account at each directory. */
export interface AcmeAccounts {
  /**
   * A client for the account at `directoryUrl` (the configured directory by
   * default): loaded from the database, or registered at the CA (with the
   * configured contact and External Account Binding) and stored with its
   * key sealed by the SecretBox.
   * @throws AcmeProblemError when the CA refuses the registration; AcmeUnreachableError when it does not answer.
   */
  client(directoryUrl?: string): Promise<acme.Client>;
  /**
   * Forgets the account at `accountUrl` (the one the failed request was
   * signed for) when the CA no longer accepts it: `error` carries the CA's
   * `accountDoesNotExist` problem (RFC 8555 §6.7), or its `unauthorized`
   * problem and a fetch of the account shows it deactivated or revoked
   * (§7.1.2, §7.3.6). Its row and this process's client for it are
   * dropped, so the next {@link AcmeAccounts.client} registers anew. A
   * successor another order or replica already registered is kept. An
   * `unauthorized` answer for any other reason (the account may not act on
   * that resource) keeps the account.
   * @returns whether the account was found unusable.
   */
  handleAccountGone(options: { error: unknown; directoryUrl: string; accountUrl: string }): Promise<boolean>;
}

/** Builds {@link AcmeAccounts} over the `gateway_accounts` table. Account keys are ECDSA P-256 (RFC 8555 ES256). */
export function createAcmeAccounts(deps: {
  sql: SqlDatabase;
  secretBox: SecretBox;
  clock: Clock;
  logger: Logger;
  config: GatewayConfig;
}): AcmeAccounts {
  const { config } = deps;
  const clients = new Map<string, Promise<acme.Client>>();
  const backoff = { backoffMin: config.acmePollMinMs, backoffMax: config.acmePollMaxMs, backoffAttempts: config.acmePollAttempts };

  const clientFor = async (directoryUrl: string, accountKey: string, accountUrl?: string): Promise<acme.Client> => {
    const { Client } = await acmeClient();
    return new Client({
      directoryUrl,
      accountKey,
      ...(accountUrl ? { accountUrl } : {}),
      ...(config.eab && directoryUrl === config.directoryUrl ? { externalAccountBinding: config.eab } : {}),
      ...backoff,
    });
  };

  const stored = (row: AccountRow) =>
    clientFor(
      row.directory_url,
      deps.secretBox.open({ sealed: row.key_sealed, context: accountKeyContext(row.directory_url) }),
      row.account_url,
    );

  async function load(directoryUrl: string): Promise<acme.Client> {
    const knex = deps.sql.knex;
    const row = (await knex('gateway_accounts').where({ directory_url: directoryUrl }).first()) as AccountRow | undefined;
    if (row) return stored(row);
    const key = (await (await acmeClient()).crypto.createPrivateEcdsaKey('P-256')).toString('utf8');
    const client = await clientFor(directoryUrl, key);
    try {
      await client.createAccount({ termsOfServiceAgreed: true, ...(config.email ? { contact: [`mailto:${config.email}`] } : {}) });
    } catch (error) {
      if (error instanceof AcmeUnreachableError) throw error;
      throw new AcmeProblemError(`The CA at ${directoryUrl} refused to register the ACME account`, null, { cause: error });
    }
    const accountUrl = client.getAccountUrl();
    try {
      await knex('gateway_accounts').insert({
        directory_url: directoryUrl,
        account_url: accountUrl,
        key_sealed: deps.secretBox.seal({ plaintext: key, context: accountKeyContext(directoryUrl) }),
        created_at: deps.clock.now(),
      });
      deps.logger.info({ directory: directoryUrl, account: accountUrl }, 'registered ACME account');
      return client;
    } catch (error) {
      if (!deps.sql.isUniqueViolation(error)) throw error;
      return load(directoryUrl);
    }
  }

  /**
   * Whether the CA no longer accepts the stored account at `accountUrl`: it
   * is fetched (POST-as-GET, RFC 8555 §7.3) and is `deactivated` or
   * `revoked`, or the CA refuses the fetch with `unauthorized` or
   * `accountDoesNotExist` (Boulder and pebble refuse every request of a
   * deactivated account, this one included, §7.3.6). An account no longer
   * stored counts as unusable: another attempt already forgot it. Any other
   * failure of the fetch (network, server error) keeps the account.
   */
  async function accountUnusable(directoryUrl: string, accountUrl: string): Promise<boolean> {
    const row = (await deps.sql.knex('gateway_accounts').where({ directory_url: directoryUrl, account_url: accountUrl }).first()) as
      | AccountRow
      | undefined;
    if (!row) return true;
    const client = await stored(row);
    return captureAcmeProblems(async (last) => {
      try {
        const account = await client.updateAccount();
        return UNUSABLE_STATUSES.has(account.status);
      } catch {
        const type = last.problem()?.type;
        return type === UNAUTHORIZED || type === ACCOUNT_DOES_NOT_EXIST;
      }
    });
  }

  return {
    client(directoryUrl = config.directoryUrl) {
      let pending = clients.get(directoryUrl);
      if (!pending) {
        pending = load(directoryUrl);
        clients.set(directoryUrl, pending);
        pending.catch(() => clients.delete(directoryUrl));
      }
      return pending;
    },
    async handleAccountGone({ error, directoryUrl, accountUrl }) {
      const problem = error instanceof AcmeProblemError ? error.problem : asAcmeProblem(error);
      const unusable =
        problem?.type === ACCOUNT_DOES_NOT_EXIST || (problem?.type === UNAUTHORIZED && (await accountUnusable(directoryUrl, accountUrl)));
      if (!unusable) return false;
      const cached = clients.get(directoryUrl);
      const cachedUrl = await cached?.then(
        (client) => client.getAccountUrl(),
        () => null,
      );
      if (cachedUrl === accountUrl && clients.get(directoryUrl) === cached) clients.delete(directoryUrl);
      const deleted = await deps.sql.knex('gateway_accounts').where({ directory_url: directoryUrl, account_url: accountUrl }).delete();
      if (deleted > 0) {
        deps.logger.warn(
          { directory: directoryUrl, account: accountUrl, problem: problem?.type },
          'the CA no longer accepts the ACME account (unknown, deactivated or revoked); a new one is registered on the next attempt',
        );
      }
      return true;
    },
  };
}
