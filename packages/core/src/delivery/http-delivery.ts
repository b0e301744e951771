import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { type Clock, isoTimestamp, systemClock } from '../ports/clock.js';
import type { DeliveryResult, HttpDelivery } from '../ports/http-delivery.js';
import { bareHostname, guardedLookup, type HostResolver, parseTarget, resolveTarget, systemResolver } from './target-guard.js';
import { signWebhook } from './webhook-signature.js';

/**
 * The outcome of a delivery is its status; the answer's body is only read to
 * let the connection be reused: at most this many bytes, then it is cut off.
 */
const MAX_RESPONSE_BYTES = 65_536;
/** Milliseconds an answer's body may take to end once its status has come; a slower one is cut off. */
const MAX_BODY_DRAIN_MS = 1_000;

const isFunction = (value: unknown) => typeof value === 'function';

/** Options of {@link createHttpDelivery}. */
export const httpDeliveryOptionsSchema = z.object({
  /**
   * Lets deliveries reach loopback, private and link-local addresses, over
   * plain `http://` too (config `allowPrivateCallbacks`, env
   * `AGENTINFRA_ALLOW_PRIVATE_CALLBACKS`; tests and labs only).
   */
  allowPrivate: z.boolean(),
  /** Source of `webhook-timestamp` and the body's `timestamp` (default: the wall clock). */
  clock: z.custom<Clock>((value) => typeof value === 'object' && value !== null && isFunction((value as Clock).now)).optional(),
  /** Milliseconds one delivery may take, connection to the answer's status, when `send` gives none. */
  defaultTimeoutMs: z.number().int().min(1).max(600_000).default(30_000),
  /** Host name resolver (default: the system's `getaddrinfo`); tests inject one to play DNS. */
  resolver: z.custom<HostResolver>(isFunction).optional(),
  /** Extra PEM certificates trusted for `https://` targets, on top of Node's bundled roots (labs, tests). */
  extraCaCertificates: z.array(z.string().min(1)).default([]),
  /** Connections kept per target host and port. */
  maxSocketsPerHost: z.number().int().min(1).max(4_096).default(256),
  /** `user-agent` header. */
  userAgent: z.string().min(1).max(256).default('agentinfra-webhooks/0.1'),
});
/** Options of {@link createHttpDelivery} as callers write them. */
export type HttpDeliveryOptions = z.input<typeof httpDeliveryOptionsSchema>;

/** What a POST produced: the receiver's status (its body does not count). */
interface PostOutcome {
  status: number;
}

/**
 * Reads and discards an answer's body after its status has settled the
 * delivery, so that a keep-alive connection goes back to the pool; a body over
 * {@link MAX_RESPONSE_BYTES} or still open after {@link MAX_BODY_DRAIN_MS} is
 * cut off (its connection closed), so a receiver that never finishes its
 * body holds no delivery slot.
 */
function discardBody(response: http.IncomingMessage): void {
  let received = 0;
  const cutOff = setTimeout(() => response.destroy(), MAX_BODY_DRAIN_MS);
  cutOff.unref();
  response.once('close', () => clearTimeout(cutOff));
  response.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > MAX_RESPONSE_BYTES) response.destroy();
  });
}

/**
 * The {@link HttpDelivery} port over Node's `http`/`https` clients, per
 * CONTRACT.md "Signed deliveries" and the Standard Webhooks specification
 * (https://www.standardwebhooks.com, v1):
 * - body `{ type, timestamp (ISO 8601 UTC, ms), data }` as JSON;
 * - headers `webhook-id`, `webhook-timestamp` (Unix seconds) and
 *   `webhook-signature` = `v1,<base64 HMAC-SHA256 over "<id>.<timestamp>.<body>">`
 *   per active secret, space-separated; `x-service-webhook-timestamp` and
 *   `x-service-webhook-signature` carry the same values;
 * - SSRF guard: `https://` only; loopback, private (RFC 1918), CGNAT,
 *   unique-local, link-local (incl. 169.254.169.254), unspecified,
 *   multicast and reserved addresses refused — on the URL's literal and on
 *   every address its name resolves to — and the connection pinned to the
 *   checked address (resolution happens inside the socket's `lookup`, so DNS
 *   rebinding between check and connect is impossible). With `allowPrivate`
 *   every address and plain `http://` are allowed;
 * - each send aborts after its timeout (or the caller's signal) unless the
 *   receiver's status has come; the status settles the send, and the body
 *   is discarded (at most 64 KiB within 1 s, then the connection is closed);
 *   redirects are never followed (a 3xx is a non-2xx answer); no proxy is used.
 * Keep-alive connections are reused per host (each was checked when opened).
 * @throws ZodError when `options` are invalid.
 */
export function createHttpDelivery(options: HttpDeliveryOptions): HttpDelivery {
  const settings = httpDeliveryOptionsSchema.parse(options);
  const clock = settings.clock ?? systemClock;
  const resolver = settings.resolver ?? systemResolver;
  const { allowPrivate } = settings;
  const lookup = guardedLookup({ allowPrivate, resolver });
  const agentOptions = { keepAlive: true, maxSockets: settings.maxSocketsPerHost, timeout: 60_000, lookup };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent({
    ...agentOptions,
    ...(settings.extraCaCertificates.length > 0 ? { ca: [...rootCertificates, ...settings.extraCaCertificates] } : {}),
  });

  function post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<PostOutcome> {
    return new Promise((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const request = (secure ? https : http).request({
        method: 'POST',
        protocol: url.protocol,
        hostname: bareHostname(url),
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers,
        agent: secure ? httpsAgent : httpAgent,
        lookup,
        signal,
      });
      let answered = false;
      // The status decides the outcome: a receiver that answers 2xx and then never finishes its body has succeeded.
      request.once('response', (response) => {
        answered = true;
        resolve({ status: response.statusCode ?? 0 });
        discardBody(response);
      });
      // A 101 answer emits no 'response', only 'upgrade' (with no listener Node destroys the socket, silently):
      // without these the promise never settled and the delivery held its worker until the job's own timeout.
      request.once('upgrade', (response, socket) => {
        answered = true;
        socket.destroy();
        resolve({ status: response.statusCode ?? 101 });
      });
      request.once('close', () => {
        if (!answered) reject(new Error('the connection closed before the receiver answered'));
      });
      request.once('error', reject);
      request.end(body);
    });
  }

  return {
    async checkTarget(target) {
      const url = parseTarget(target, allowPrivate);
      if (!allowPrivate) await resolveTarget({ hostname: bareHostname(url), allowPrivate, resolver });
    },

    async send(message): Promise<DeliveryResult> {
      const url = parseTarget(message.url, allowPrivate);
      // Sockets skip `lookup` for IP literals, so those are checked here; names are checked inside the connection's lookup.
      const hostname = bareHostname(url);
      if (isIP(hostname) !== 0) await resolveTarget({ hostname, allowPrivate, resolver });
      const now = clock.now();
      const timestampSeconds = Math.floor(now / 1000);
      const body = JSON.stringify({ type: message.type, timestamp: isoTimestamp(now), data: message.data });
      const signature = signWebhook({ secrets: message.secrets, messageId: message.messageId, timestampSeconds, body });
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': settings.userAgent,
        'webhook-id': message.messageId,
        'webhook-timestamp': String(timestampSeconds),
        'webhook-signature': signature,
        'x-service-webhook-timestamp': String(timestampSeconds),
        'x-service-webhook-signature': signature,
      };
      const timeoutMs = message.timeoutMs ?? settings.defaultTimeoutMs;
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = message.signal ? AbortSignal.any([message.signal, timeout]) : timeout;
      const started = performance.now();
      try {
        const { status } = await post(url, headers, body, signal);
        return { status, ok: status >= 200 && status < 300, ms: Math.round(performance.now() - started) };
      } catch (error) {
        if (error instanceof InputError) throw error;
        if (timeout.aborted) throw new Error(`Delivery to ${url.origin} timed out after ${timeoutMs} ms.`, { cause: error });
        if (message.signal?.aborted) throw new Error(`Delivery to ${url.origin} was aborted.`, { cause: error });
        const code = (error as { code?: unknown }).code;
        const reason = typeof code === 'string' ? code : (error as Error).message;
        throw new Error(`Delivery to ${url.origin} failed: ${reason}.`, { cause: error });
      }
    },
  };
}
