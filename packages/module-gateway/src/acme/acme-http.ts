import { AsyncLocalStorage } from 'node:async_hooks';
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import { type AcmeClientModule, loadAcmeClient } from './acme-client-loader.js';
import { type AcmeProblem, asAcmeProblem } from './problem-document.js';

/**
 * acme-client sends every request through one shared axios instance. Three
 * interceptors are installed on it once per process, when {@link acmeClient}
 * first loads it (before any request this module makes):
 * - CA trust per origin: requests to an ACME server's origin registered
 *   with {@link trustAcmeServerCa} use an HTTPS agent that trusts the
 *   system roots plus that server's extra CA (pebble's, a private CA's).
 *   Nothing else in the process trusts it, and no `NODE_EXTRA_CA_CERTS`
 *   is needed.
 * - Problem capture: acme-client keeps only the `detail` of an error
 *   answer; the HTTP status and the whole RFC 7807 problem document of the
 *   latest answer are recorded in the {@link captureAcmeProblems} context
 *   that made the request (each new request clears them, so a `badNonce`
 *   that acme-client retried never shows up as the cause of a later failure).
 * - Request timeout: a request with no answer within its origin's timeout
 *   (see {@link limitAcmeRequests}) is aborted, and fails as below.
 * - Fail fast: a request that got no answer (connection refused, host not
 *   found, TLS failure, reset, timeout) fails at once with an
 *   {@link AcmeUnreachableError}. acme-client retries it 5 times, 5 to 25 s
 *   apart (75 s in all), which would hold a job attempt far past its
 *   purpose; the job runner's back-off retries the attempt instead. The
 *   interceptor runs ahead of acme-client's own, and only answers (429 and
 *   5xx with `Retry-After`) reach that one's retries.
 */
const agents = new Map<string, { pems: string[]; agent: Agent }>();
/** Per ACME server origin, the longest one request may go unanswered, ms (see {@link limitAcmeRequests}). */
const requestTimeouts = new Map<string, number>();
/**
 * The longest one request to an ACME server may go unanswered, ms, for an
 * origin {@link limitAcmeRequests} did not name: axios waits for ever by
 * default, so a CA that accepts the connection and never answers would hold
 * an attempt until `gateway.orderTimeoutMs`.
 */
export const ACME_REQUEST_TIMEOUT_MS = 30_000;
const problems = new AsyncLocalStorage<{ problem: AcmeProblem | null; status: number | null }>();
let installed = false;

/** A request to an ACME server that got no answer: connection refused, host not found, TLS failure, reset, timeout. */
export class AcmeUnreachableError extends Error {
  override readonly name = 'AcmeUnreachableError';
  /**
   * @param url the URL requested (the directory URL for the first request of a client).
   * @param reason the network error's message, with its code when the message lacks it (`connect ECONNREFUSED 127.0.0.1:1`).
   */
  constructor(
    readonly url: string,
    readonly reason: string,
    options: { cause: unknown },
  ) {
    super(`The ACME server at ${url} did not answer (${reason})`, options);
  }
}

/** What axios hands acme-client's response interceptors: every answer (its status check is off) and every network failure. */
interface AxiosFailure {
  config?: { url?: string };
  response?: unknown;
  code?: string;
  message?: string;
}

/** `failure` as an {@link AcmeUnreachableError} when the request got no answer (no config: acme-client passes it on), else unchanged. */
function failFast(failure: AxiosFailure): Promise<never> {
  if (failure.response !== undefined || !failure.config) return Promise.reject(failure);
  const code = failure.code ?? 'network error';
  const reason = failure.message?.includes(code) ? failure.message : [code, failure.message].filter(Boolean).join(': ');
  return Promise.reject(new AcmeUnreachableError(failure.config.url ?? 'unknown URL', reason, { cause: failure }));
}

/** Installs the interceptors on `acme`'s axios instance (once per process). */
function installAcmeInterceptors(acme: AcmeClientModule): void {
  if (installed) return;
  installed = true;
  // Ahead of acme-client's retry interceptor (axios runs response interceptors in the array's order, and lets the array be replaced).
  const responses = acme.axios.interceptors.response;
  responses.handlers = [
    { fulfilled: (response) => response, rejected: failFast, synchronous: false, runWhen: null },
    ...(responses.handlers ?? []),
  ];
  acme.axios.interceptors.request.use((config) => {
    const store = problems.getStore();
    if (store) {
      store.problem = null;
      store.status = null;
    }
    if (config.url) {
      const origin = new URL(config.url).origin;
      if (!config.httpsAgent) {
        const trusted = agents.get(origin);
        if (trusted) config.httpsAgent = trusted.agent;
      }
      if (!config.timeout) config.timeout = requestTimeouts.get(origin) ?? ACME_REQUEST_TIMEOUT_MS;
    }
    return config;
  });
  acme.axios.interceptors.response.use((response) => {
    const store = problems.getStore();
    if (store && response.status >= 400) {
      store.problem = asAcmeProblem(response.data);
      store.status = response.status;
    }
    return response;
  });
}

/**
 * acme-client (imported on first use, see ./acme-client-loader.ts) with the
 * interceptors installed: what every part of this module that talks to a CA
 * builds its clients from.
 */
export async function acmeClient(): Promise<AcmeClientModule> {
  const acme = await loadAcmeClient();
  installAcmeInterceptors(acme);
  return acme;
}

/**
 * Sets how long one request to the origin of `directoryUrl` may go
 * unanswered (`gateway.acmeRequestTimeoutMs`), instead of
 * {@link ACME_REQUEST_TIMEOUT_MS}. Synchronous, and loads nothing: the
 * interceptors read it at each request.
 */
export function limitAcmeRequests(options: { directoryUrl: string; timeoutMs: number }): void {
  requestTimeouts.set(new URL(options.directoryUrl).origin, options.timeoutMs);
}

/**
 * Trusts `caPem` (one or more PEM certificates) for HTTPS requests that
 * acme-client makes to the origin of `directoryUrl`, on top of the system
 * roots. Idempotent per (origin, PEM). Synchronous, and loads nothing: the
 * trust is read by the interceptors at each request.
 */
export function trustAcmeServerCa(options: { directoryUrl: string; caPem: string }): void {
  const origin = new URL(options.directoryUrl).origin;
  const pems = agents.get(origin)?.pems ?? [];
  if (pems.includes(options.caPem)) return;
  const next = [...pems, options.caPem];
  agents.get(origin)?.agent.destroy();
  agents.set(origin, { pems: next, agent: new Agent({ keepAlive: true, ca: [...rootCertificates, ...next] }) });
}

/** The latest answer of the ACME server within a {@link captureAcmeProblems} context, when it was an error. */
export interface LastAcmeAnswer {
  /** Its RFC 7807 problem document; null after a success or an error without one. */
  problem(): AcmeProblem | null;
  /** Its HTTP status (400 and up); null after a success. */
  status(): number | null;
}

/**
 * Runs `work` and records the latest ACME answer made during it; `last`
 * reads it, also after `work` failed.
 */
export async function captureAcmeProblems<T>(work: (last: LastAcmeAnswer) => Promise<T>): Promise<T> {
  await acmeClient();
  const store = { problem: null as AcmeProblem | null, status: null as number | null };
  return problems.run(store, () => work({ problem: () => store.problem, status: () => store.status }));
}
