import { readTextUpTo } from './response-text.js';

/**
 * A failed call, as the server's CONTRACT.md error body
 * `{ "error": { "code", "message", "details"? } }` describes it, plus the
 * HTTP status and the `x-request-id` to quote when reporting it.
 * A non-2xx answer without that body keeps its status, with code
 * `server_error` (5xx) or `invalid_response` (a 3xx redirect, never followed,
 * too: `details.location` names its target when readable). Client-side
 * failures use status 0 and the codes `network_error` (connection refused or
 * reset; `cause` holds the fetch error), `timeout` (no answer within
 * `timeoutMs`), `aborted` (the caller's signal), `invalid_response` (a 2xx
 * body that is not a JSON object or is larger than `maxResponseBytes`) and
 * `invalid_request` (a bad client option or per-call header, or bad local
 * input to `artifacts.upload`, found before any request; for the latter
 * `details.fields` names the field).
 */
export class AgentInfraError extends Error {
  override readonly name = 'AgentInfraError';
  /** HTTP status (400, 401, 403, 404, 409, 413, 422, 429, 5xx), or 0 when no response arrived. */
  readonly status: number;
  /** Machine-readable code, e.g. `invalid_request`, `unauthenticated`, `forbidden`, `not_found`, `rate_limited`. */
  readonly code: string;
  /** Whatever the server put in `error.details` (e.g. the fields that failed validation), or `undefined`. */
  readonly details: unknown;
  /** The response's `x-request-id` (the server's log line carries it), or `undefined`. */
  readonly requestId: string | undefined;
  /** Seconds the server asked to wait (`Retry-After` of a 429 or 503), or `undefined`. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    details?: unknown;
    requestId?: string;
    retryAfterSeconds?: number;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/**
 * Seconds from a `Retry-After` header (RFC 9110 §10.2.3: delay-seconds or an
 * HTTP-date), or `undefined` when absent or unreadable.
 */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/** The most of an error body that is read (64 KiB); the rest is cancelled unread. */
const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * The {@link AgentInfraError} of a non-2xx response, read from its CONTRACT.md
 * body (its first 64 KiB; a body that cannot be read counts as empty).
 * @param sent the credential the request carried: a server or proxy that
 *   echoes it (a debugging proxy repeating the request's headers) has it
 *   replaced by `[redacted]` before it can reach a message or `details`.
 */
export async function errorOfResponse(response: Response, sent?: string): Promise<AgentInfraError> {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
  const read = (await readTextUpTo(response, ERROR_BODY_LIMIT).catch(() => ({ text: '' }))).text;
  const text = sent ? read.split(sent).join('[redacted]') : read;
  let body: { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const error = body?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string')
    return new AgentInfraError({
      status: response.status,
      code: error.code,
      message: error.message,
      details: error.details,
      requestId,
      retryAfterSeconds: retryAfter,
    });
  return new AgentInfraError({
    status: response.status,
    code: response.status >= 500 ? 'server_error' : 'invalid_response',
    message: `HTTP ${response.status}: ${text.slice(0, 200) || response.statusText}`,
    requestId,
    retryAfterSeconds: retryAfter,
  });
}
