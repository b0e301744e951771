import { readFile } from 'node:fs/promises';
import { ConfigError } from '@agentinfra/core';
import { createAcmeAccounts } from './acme/acme-accounts.js';
import { limitAcmeRequests, trustAcmeServerCa } from './acme/acme-http.js';
import { type ChallengeResponder, createDns01Responder, createHttp01Responder } from './acme/challenge-responders.js';
import { createOrderProcessor } from './acme/order-processor.js';
import { createGatewayAdmin } from './admin-queries.js';
import { registerCertificateMetrics } from './certificate-metrics.js';
import { createCertificateOrders } from './certificate-orders.js';
import type { DnsProvider } from './dns01/dns-provider.js';
import { createRfc2136DnsProvider } from './dns01/rfc2136-provider.js';
import type { GatewayContext, GatewayDeps } from './gateway-context.js';
import { createHostBindings } from './host-bindings.js';
import { type Http01Listener, startHttp01Listener } from './http01-listener.js';
import { createKeyReseal } from './key-reseal.js';
import { createRevocations } from './revocations.js';
import type { IssueCertificateRequest, ListHostsRequest, ListHostsResponse, OrderSummary } from './schemas.js';
import { createTxtLookup, type TxtLookup } from './txt-lookup.js';

/** Replaceable parts of the gateway (`createGatewayModule(options)`). */
export interface GatewayExtensions {
  /** DNS-01 record publisher; default: RFC 2136 from `gateway.rfc2136` when configured. */
  dnsProvider?: DnsProvider;
  /** TXT lookups for /host/claim and DNS-01 propagation; default: `node:dns` through `gateway.dnsServers`. */
  txtLookup?: TxtLookup;
}

/**
 * agent-gateway without HTTP: hosts bound to agents after a DNS TXT proof,
 * ACME certificates ordered, stored (keys sealed with the SecretBox and
 * resealed after a master-key rotation), renewed at a third of their
 * lifetime left and revoked on release, and the hosts' IP addresses. `start` loads the ACME CA file, checks the
 * DNS-01 setup and opens the HTTP-01 listener; `stop` closes it. Route
 * methods take the parsed request bodies (`z.output` of the schemas in
 * `schemas.ts`: the kernel parses each body once; a library caller with
 * untyped data runs core's `parseRequest` first) and return the response shapes.
 */
export function createGatewayService(deps: GatewayDeps, extensions: GatewayExtensions = {}) {
  const config = deps.moduleConfig;
  const logger = deps.logger;
  const txtLookup = extensions.txtLookup ?? createTxtLookup({ servers: config.dnsServers });
  registerCertificateMetrics(deps);
  const dnsProvider = extensions.dnsProvider ?? (config.rfc2136 ? createRfc2136DnsProvider(config.rfc2136) : undefined);
  const accounts = createAcmeAccounts({ sql: deps.sql, secretBox: deps.secretBox, clock: deps.clock, logger, config });
  const responder: ChallengeResponder =
    config.challenge === 'dns-01' && dnsProvider
      ? createDns01Responder({ provider: dnsProvider, txtLookup, propagationTimeoutMs: config.dnsPropagationTimeoutMs, logger })
      : createHttp01Responder({ sql: deps.sql, clock: deps.clock });
  const processor = createOrderProcessor({
    sql: deps.sql,
    secretBox: deps.secretBox,
    clock: deps.clock,
    accounts,
    responder,
    keyType: config.keyType,
  });
  const context: GatewayContext = { deps, config, logger, accounts, processor, txtLookup };
  const hosts = createHostBindings(context);
  const orders = createCertificateOrders(context);
  const revocations = createRevocations(context);
  const reseal = createKeyReseal({ sql: deps.sql, secretBox: deps.secretBox });
  let listener: Http01Listener | null = null;

  const service = {
    claimHost: hosts.claim,
    releaseHost: hosts.release,
    reportIps: hosts.reportIps,
    getCertificate: hosts.getCertificate,
    /** Bound hosts (all, or one agent's) in name order, with certificate expiry, status, IPs and their latest order. */
    list: (body: ListHostsRequest): Promise<ListHostsResponse> => hosts.list(body),
    /** Forces an order for a bound host (or returns its live order). @throws NotFoundError when the host is not bound. */
    issueCertificate: (body: IssueCertificateRequest): Promise<OrderSummary> => orders.request(body.host, 'issue'),
    renewCertificates: orders.renew,
    /**
     * The daily job: renews every certificate with less than a third of its
     * lifetime left, then tidies up (`sweep`). Stops between hosts and
     * between steps once `signal` aborts.
     * @throws the abort reason once `signal` aborted.
     */
    async renewDue(options: { signal?: AbortSignal } = {}) {
      const result = await orders.renew({}, options.signal);
      await service.sweep(options);
      return result;
    },
    runOrder: orders.run,
    runRevocation: revocations.run,

    /**
     * Finishes a master-key rotation for the gateway (the hourly
     * `gateway.reseal-keys` job): every ACME account key and certificate key
     * (of orders and of stored certificates) sealed under an older key
     * version is sealed again under the current one, unless it was replaced
     * meanwhile. Idempotent.
     * @returns `{ accounts, orders, certificates }`: how many keys were resealed in each.
     * @throws UnopenedSealedValuesError when some keys could not be opened (the others are resealed all the same).
     */
    resealKeys: (options: { signal?: AbortSignal } = {}) => reseal.resealAll(options),

    /**
     * Deletes expired claim tokens, stale HTTP-01 tokens and finished orders
     * past retention that /list no longer shows, recovers orders whose
     * job died and ends revocations whose job died (dropping their sealed
     * certificate keys). Stops between these steps once `signal` aborts.
     * @throws the abort reason once `signal` aborted.
     */
    async sweep(options: { signal?: AbortSignal } = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      await hosts.sweepClaims();
      signal?.throwIfAborted();
      await deps.sql.knex('gateway_http_tokens').where('expires_at', '<=', deps.clock.now()).delete();
      await orders.pruneFinished(signal);
      await orders.recover(signal);
      await revocations.recover(signal);
    },

    /** The port of the running HTTP-01 listener, or null. */
    http01Port: () => listener?.port ?? null,

    /**
     * Start-up: sets the request timeout and trusts `caFile` for the ACME server's origin, checks that
     * DNS-01 has a provider, opens the HTTP-01 listener (a port that
     * cannot be bound is logged, not fatal: the rest of the server still
     * starts) and recovers orders left by a crash.
     * @throws ConfigError when `caFile` cannot be read or DNS-01 has no provider.
     */
    async start() {
      limitAcmeRequests({ directoryUrl: config.directoryUrl, timeoutMs: config.acmeRequestTimeoutMs });
      if (config.caFile) {
        let caPem: string;
        try {
          caPem = await readFile(config.caFile, 'utf8');
        } catch (error) {
          throw new ConfigError(`gateway.caFile (AGENTINFRA_ACME_CA_FILE) cannot be read: ${(error as Error).message}`);
        }
        trustAcmeServerCa({ directoryUrl: config.directoryUrl, caPem });
      }
      if (config.challenge === 'dns-01' && !dnsProvider) {
        throw new ConfigError(
          'gateway.challenge is dns-01 but no DNS provider is set up: configure gateway.rfc2136 ' +
            '(AGENTINFRA_DNS01_RFC2136_SERVER, _KEY_NAME, _KEY_SECRET) or pass createGatewayModule({ dnsProvider }).',
        );
      }
      if (config.challenge === 'http-01' && config.httpPort > 0) {
        try {
          listener = await startHttp01Listener({
            port: config.httpPort,
            host: config.httpHost ?? deps.config.host,
            logger,
            lookup: async (token) => {
              // An expired token is not served, whether or not the daily sweep has deleted it yet.
              const row = (await deps.sql
                .knex('gateway_http_tokens')
                .where({ token })
                .andWhere('expires_at', '>', deps.clock.now())
                .first()) as { key_authorization: string } | undefined;
              return row?.key_authorization ?? null;
            },
          });
          logger.info({ port: listener.port }, 'HTTP-01 challenge listener started');
        } catch (error) {
          const host = config.httpHost ?? deps.config.host;
          const code = (error as NodeJS.ErrnoException).code;
          logger.warn(
            { host, port: config.httpPort, code },
            `HTTP-01 challenge listener not started: cannot listen on ${host}:${config.httpPort} (${code ?? (error as Error).message}); ` +
              'http-01 orders will fail until a listener serves the tokens',
          );
        }
      }
      logger.info(
        { directory: config.directoryUrl, challenge: config.challenge, dns: txtLookup.describe(), dns01: dnsProvider?.describe() ?? null },
        'gateway ready',
      );
      await orders.recover();
    },

    /** Closes the HTTP-01 listener. */
    async stop() {
      await listener?.close();
      listener = null;
    },

    /** Listings for operators (the `/admin/*` routes). */
    admin: createGatewayAdmin(deps, hosts),
  };
  return service;
}

/** The agent-gateway service. */
export type GatewayService = ReturnType<typeof createGatewayService>;
