import type { Clock, PortMap, SqlDatabase } from '@agentinfra/core';
import type { DnsProvider } from '../dns01/dns-provider.js';
import type { TxtLookup } from '../txt-lookup.js';

type Logger = PortMap['logger'];

/** Publishes the response to one challenge; the returned function takes it down again. */
export interface ChallengeResponder {
  readonly type: 'http-01' | 'dns-01';
  provision(options: {
    orderId: string;
    host: string;
    token: string;
    keyAuthorization: string;
    signal: AbortSignal;
  }): Promise<() => Promise<void>>;
}

/** HTTP-01 tokens stay servable this long at most if a cleanup is lost (a crash mid-order). */
const HTTP_TOKEN_TTL_MS = 86_400_000;

/**
 * HTTP-01 (RFC 8555 §8.3): the key authorization is stored under its token
 * in `gateway_http_tokens`, where every replica's challenge listener finds it.
 */
export function createHttp01Responder(deps: { sql: SqlDatabase; clock: Clock }): ChallengeResponder {
  return {
    type: 'http-01',
    async provision({ orderId, token, keyAuthorization }) {
      const knex = deps.sql.knex;
      const row = { token, key_authorization: keyAuthorization, order_id: orderId, expires_at: deps.clock.now() + HTTP_TOKEN_TTL_MS };
      await knex('gateway_http_tokens').insert(row).onConflict('token').merge(['key_authorization', 'order_id', 'expires_at']);
      return async () => {
        await knex('gateway_http_tokens').where({ token }).delete();
      };
    },
  };
}

/**
 * DNS-01 (RFC 8555 §8.4): the TXT value (base64url SHA-256 of the key
 * authorization) is published at `_acme-challenge.<host>` through the
 * {@link DnsProvider}, then the responder waits until `txtLookup` (the
 * configured resolvers) sees it, at most `propagationTimeoutMs`; after that
 * it goes on with a warning, since the CA asks the authoritative servers.
 */
export function createDns01Responder(deps: {
  provider: DnsProvider;
  txtLookup: TxtLookup;
  propagationTimeoutMs: number;
  logger: Logger;
}): ChallengeResponder {
  return {
    type: 'dns-01',
    async provision({ host, keyAuthorization, signal }) {
      const name = `_acme-challenge.${host}`;
      await deps.provider.addTxt({ name, value: keyAuthorization, signal });
      const remove = async () => deps.provider.removeTxt({ name, value: keyAuthorization });
      // An abort while waiting (order timeout, shutdown) must not leave the record in the zone.
      try {
        const deadline = Date.now() + deps.propagationTimeoutMs;
        let delay = 250;
        while (deps.propagationTimeoutMs > 0) {
          const seen = await deps.txtLookup.lookup(name);
          if (seen.ok && seen.values.includes(keyAuthorization)) break;
          if (Date.now() >= deadline) {
            deps.logger.warn(
              { name, resolvers: deps.txtLookup.describe() },
              'DNS-01 record not visible yet; asking the CA to validate anyway',
            );
            break;
          }
          signal.throwIfAborted();
          await new Promise((resolve) => setTimeout(resolve, delay));
          delay = Math.min(delay * 2, 5_000);
        }
      } catch (error) {
        await remove().catch(() => undefined);
        throw error;
      }
      return remove;
    },
  };
}
