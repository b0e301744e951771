import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request } from 'node:https';
import type { AcmeProblem } from '../acme/problem-document.js';
import type { PebbleServer } from './pebble.js';
import { pebbleTlsMaterial } from './pebble-tls.js';

/** A request as the proxy saw it, with the status it answered. */
export interface ProxiedRequest {
  method: string;
  /** Path and query, e.g. `/finalize-order/abc`. */
  path: string;
  status: number;
}

/** What {@link AcmeProxy.failNext} matches requests on. */
export type RequestMatcher = (request: { method: string; path: string }) => boolean;

/** Matchers for POSTs to pebble's resources (its wfe.go paths): new accounts, new orders, order finalization, orders, authorizations, certificates. */
export const pebbleRequests: Record<'newAccount' | 'newOrder' | 'finalize' | 'order' | 'authorization' | 'certificate', RequestMatcher> = {
  newAccount: (request) => request.method === 'POST' && request.path === '/sign-me-up',
  newOrder: (request) => request.method === 'POST' && request.path === '/order-plz',
  finalize: (request) => request.method === 'POST' && request.path.startsWith('/finalize-order/'),
  order: (request) => request.method === 'POST' && request.path.startsWith('/my-order/'),
  authorization: (request) => request.method === 'POST' && request.path.startsWith('/authZ/'),
  certificate: (request) => request.method === 'POST' && request.path.startsWith('/certZ/'),
};

/** An answer {@link AcmeProxy.holdNext} holds back. */
export interface HeldAnswer {
  /** Whether pebble's answer has arrived (and is being held). */
  readonly arrived: boolean;
  /** Sends the held answer (once it arrives); resolves once it has been sent. */
  release(): Promise<void>;
}

/** An RFC 8555 §6.7 problem document with the HTTP status to send it with. */
export type ProblemAnswer = AcmeProblem & { status: number };

/**
 * An HTTPS proxy in front of pebble that answers chosen requests itself
 * with a problem document, for CA answers pebble never gives on its own.
 * Everything else is forwarded unchanged, Host header included: pebble
 * builds its directory, `Location` and JWS `url` checks from that header,
 * so every URL the client sees points at the proxy.
 */
export interface AcmeProxy {
  /** `https://127.0.0.1:<port>/dir` (served with pebble's TLS certificate, so pebble's `caFile` trusts it). */
  directoryUrl: string;
  /** Every request so far, in order. */
  readonly requests: readonly ProxiedRequest[];
  /**
   * Answers the next request that `matches` with `problem` as
   * `application/problem+json` instead of forwarding it (once).
   */
  failNext(matches: RequestMatcher, problem: ProblemAnswer): void;
  /**
   * Holds pebble's answer to the next request that `matches` (once) until `release` is called.
   * `arrived` resolves once pebble has answered that request (the answer is then held);
   * `release` sends it and resolves once it has been sent.
   */
  holdNext(matches: RequestMatcher): HeldAnswer;
  stop(): Promise<void>;
}

/** Starts an {@link AcmeProxy} on a free loopback port in front of `pebble`. */
export async function startAcmeProxy(options: { pebble: PebbleServer }): Promise<AcmeProxy> {
  const tls = await pebbleTlsMaterial();
  const target = new URL(options.pebble.directoryUrl);
  const requests: ProxiedRequest[] = [];
  const rules: Array<{ matches: RequestMatcher; problem: ProblemAnswer }> = [];
  const holds: Array<{ matches: RequestMatcher; arrive: (send: () => Promise<void>) => void }> = [];

  const forward = (incoming: IncomingMessage, body: Buffer, outgoing: ServerResponse, seen: { method: string; path: string }) => {
    const upstream = request(
      { host: target.hostname, port: target.port, method: seen.method, path: seen.path, headers: incoming.headers, ca: tls.caPem },
      (answer) => {
        const send = () =>
          new Promise<void>((sent) => {
            requests.push({ ...seen, status: answer.statusCode ?? 502 });
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(outgoing);
            outgoing.on('finish', () => sent());
          });
        const index = holds.findIndex((candidate) => candidate.matches(seen));
        if (index < 0) void send();
        else holds.splice(index, 1)[0]?.arrive(send);
      },
    );
    upstream.on('error', (error) => {
      requests.push({ ...seen, status: 502 });
      outgoing.writeHead(502, { 'content-type': 'text/plain' });
      outgoing.end(String(error));
    });
    upstream.end(body);
  };

  const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const seen = { method: incoming.method ?? 'GET', path: incoming.url ?? '/' };
      const index = rules.findIndex((candidate) => candidate.matches(seen));
      const rule = index < 0 ? undefined : rules.splice(index, 1)[0];
      if (!rule) {
        forward(incoming, Buffer.concat(chunks), outgoing, seen);
        return;
      }
      const { problem } = rule;
      requests.push({ ...seen, status: problem.status });
      outgoing.writeHead(problem.status, { 'content-type': 'application/problem+json' });
      outgoing.end(JSON.stringify(problem));
    });
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
  return {
    directoryUrl: `https://127.0.0.1:${port}${target.pathname}`,
    requests,
    failNext(matches, problem) {
      rules.push({ matches, problem });
    },
    holdNext(matches) {
      let arrived = false;
      const held = new Promise<() => Promise<void>>((arrive) =>
        holds.push({
          matches,
          arrive: (send) => {
            arrived = true;
            arrive(send);
          },
        }),
      );
      return {
        get arrived() {
          return arrived;
        },
        release: () => held.then((send) => send()),
      };
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
