import { callSignal } from './call-signal.js';
import { AgentInfraError, errorOfResponse } from './errors.js';
import { redirectError } from './redirect-error.js';
import { requestHeaders } from './request-headers.js';
import { readJsonObject } from './response-json.js';
import { checkedRetries, isRetryable, type RetryPolicy, retryDelayMs } from './retry-policy.js';
import { sleep } from './sleep.js';

/** What every call shares: where the server is, the credential and the limits. */
export interface TransportOptions {
  /** The server's origin, e.g. `http://127.0.0.1:8787` (routes live under `/functions/v1`). */
  url: string;
  /** Bearer credential (`dk_…`, `dt_…` or `bk_…`), or `undefined` for routes that take none. */
  key: string | undefined;
  fetch: typeof globalThis.fetch;
  /**
   * Per route call attempt, from sending to the end of the response body, in ms; for artifact transfers the longest
   * wait for progress (0 or Infinity: no limit; above 2^31−1 ms, that).
   */
  timeoutMs: number;
  /** Largest 2xx body a route call reads, in bytes. */
  maxResponseBytes: number;
  retry: RetryPolicy;
}

/** Per-call options. */
export interface CallOptions {
  /** Cancels the call (then it throws `AgentInfraError` with code `aborted`). */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Overrides the client's retry count for this call. */
  retries?: number;
  /** Extra request headers, e.g. `x-request-id`; an `authorization` here replaces the client's key. */
  headers?: Record<string, string>;
}

async function attempt(options: TransportOptions, path: string, json: string, call: CallOptions): Promise<unknown> {
  const deadline = callSignal(call.signal, call.timeoutMs ?? options.timeoutMs);
  try {
    deadline.signal.throwIfAborted();
    const headers = requestHeaders(options.key, call.headers);
    const response = await options.fetch(`${options.url}/functions/v1/${path}`, {
      method: 'POST',
      headers,
      body: json,
      redirect: 'manual',
      signal: deadline.signal,
    });
    const redirect = redirectError(response);
    if (redirect) {
      await response.body?.cancel().catch(() => {});
      throw redirect;
    }
    if (!response.ok) throw await errorOfResponse(response, headers.get('authorization')?.replace(/^Bearer\s+/i, '') || undefined);
    return await readJsonObject(response, options.maxResponseBytes);
  } catch (error) {
    throw deadline.failure(error, `Request to ${path}`);
  } finally {
    deadline.dispose();
  }
}

/**
 * POSTs `body` as JSON to `/functions/v1/<path>` and returns the parsed JSON
 * object answered, repeating the call as {@link isRetryable} allows (`idempotent`:
 * the route is declared safe to repeat) after the delay {@link retryDelayMs} gives.
 * Redirects are not followed.
 * @throws AgentInfraError on a non-2xx answer (a 3xx: `invalid_response`), a 2xx body that is not a JSON object or is
 *   larger than `maxResponseBytes`, bad per-call `headers` or `timeoutMs` (`invalid_request`), a network error, a
 *   timeout or an abort.
 */
export async function postJson(
  options: TransportOptions,
  path: string,
  body: unknown,
  idempotent: boolean,
  call: CallOptions = {},
): Promise<unknown> {
  const json = JSON.stringify(body);
  const retries = call.retries === undefined ? options.retry.retries : checkedRetries(call.retries);
  for (let tries = 0; ; tries += 1) {
    try {
      return await attempt(options, path, json, call);
    } catch (error) {
      if (!(error instanceof AgentInfraError) || tries >= retries || !isRetryable(error, idempotent)) throw error;
      const delay = retryDelayMs(options.retry, tries + 1, error);
      if (delay === undefined) throw error;
      await sleep(delay, call.signal);
    }
  }
}
