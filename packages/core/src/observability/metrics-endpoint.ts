import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { readCredential } from '../auth/credential-transport.js';
import { equalsSecret } from '../credentials.js';
import { AuthenticationError, errorBody, methodNotAllowed } from '../errors.js';
import type { HttpMount } from '../kernel/http.js';

/** Path of the Prometheus endpoint. */
export const METRICS_PATH = '/metrics';

/** What the guarded endpoint needs from the kernel. */
export interface MetricsEndpointOptions {
  registry: Registry;
  bridgeKey: string;
  /** `metrics.token`, accepted instead of the bridge key. */
  token?: string;
  /**
   * Counts refused scrapes against the failed-authentication limit.
   * @throws RateLimitError when the address is over it.
   */
  refused(client: string, reason: 'missing' | 'unknown'): Promise<void>;
  /** Refuses an address over the failed-authentication limit. @throws RateLimitError. */
  check(client: string): Promise<void>;
}

async function exposition(registry: Registry): Promise<Response> {
  return new Response(await registry.metrics(), { headers: { 'content-type': registry.contentType } });
}

/**
 * `GET /metrics` on the API listener, in the Prometheus text format,
 * guarded by a bearer credential: the metrics token when one is configured,
 * or the bridge key (logged and audited as `bridge.use` like any other use
 * of it). Refusals count against the failed-authentication limit like any
 * other.
 */
export function guardedMetricsMount(options: MetricsEndpointOptions): HttpMount {
  const isBridgeKey = equalsSecret(options.bridgeKey);
  const isToken = options.token === undefined ? () => false : equalsSecret(options.token);
  return {
    path: METRICS_PATH,
    async fetch(request, _body, info) {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return methodNotAllowed(request.method, ['GET', 'HEAD']);
      }
      const client = info?.client ?? 'unknown';
      await options.check(client);
      const credential = readCredential({ get: (name) => request.headers.get(name) ?? undefined });
      if (credential && isToken(credential)) return exposition(options.registry);
      if (credential && isBridgeKey(credential)) {
        // Named to the request observer, which logs the caller and audits the use (bridge.use, kernel/metrics).
        info?.identify({ kind: 'bridge' });
        return exposition(options.registry);
      }
      await options.refused(client, credential ? 'unknown' : 'missing');
      return Response.json(errorBody(new AuthenticationError('Send the metrics token or the bridge key as Authorization: Bearer.')), {
        status: 401,
        headers: { 'www-authenticate': 'Bearer' },
      });
    },
  };
}

/** A running metrics listener. */
export interface MetricsListener {
  /** `http://host:port/metrics`. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` without a credential on its own port, for scrapers
 * on a private network (bind it to an address only they reach).
 */
export function startMetricsListener(options: { registry: Registry; port: number; host: string }): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    if (request.url?.split('?')[0] !== METRICS_PATH || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found; the metrics are at /metrics.\n');
      return;
    }
    options.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('Metrics could not be collected.\n'),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      const { port } = server.address() as AddressInfo;
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      resolve({
        url: `http://${host}:${port}${METRICS_PATH}`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
