import { AgentInfraError, errorOfResponse } from './errors.js';
import { isRetryable, type RetryPolicy, retryDelayMs } from './retry-policy.js';

/** What every call shares: where the server is, the credential and the limits. */
export interface TransportOptions {
  /** The server's origin, e.g. `http://127.0.0.1:8787` (routes live under `/functions/v1`). */
  url: string;
  /** Bearer credential (`dk_…`, `dt_…` or `bk_…`), or `undefined` for routes that take none. */
  key: string | undefined;
  fetch: typeof globalThis.fetch;
  /** Per attempt, from sending to the end of the response body, in ms (0: no limit). */
  timeoutMs: number;
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
  /** Extra request headers, e.g. `x-request-id`. */
  headers?: Record<string, string>;
}

function abortError(signal: AbortSignal, timedOut: boolean, timeoutMs: number): AgentInfraError {
  if (timedOut) return new AgentInfraError({ status: 0, code: 'timeout', message: `No answer within ${timeoutMs} ms.` });
  return new AgentInfraError({ status: 0, code: 'aborted', message: 'The call was aborted.', cause: signal.reason });
}

async function attempt(options: TransportOptions, path: string, json: string, call: CallOptions): Promise<unknown> {
  const timeoutMs = call.timeoutMs ?? options.timeoutMs;
  const controller = new AbortController();
  let timedOut = false;
  const timer =
    timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, timeoutMs)
      : undefined;
  const onAbort = () => controller.abort(call.signal?.reason);
  call.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (call.signal?.aborted) throw abortError(call.signal, false, timeoutMs);
    const headers: Record<string, string> = { 'content-type': 'application/json', ...call.headers };
    if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
    const response = await options.fetch(`${options.url}/functions/v1/${path}`, {
      method: 'POST',
      headers,
      body: json,
      signal: controller.signal,
    });
    if (!response.ok) throw await errorOfResponse(response);
    return await response.json();
  } catch (error) {
    if (error instanceof AgentInfraError) throw error;
    if (controller.signal.aborted) throw abortError(controller.signal, timedOut, timeoutMs);
    if (error instanceof SyntaxError)
      throw new AgentInfraError({ status: 0, code: 'invalid_response', message: 'The response body is not JSON.', cause: error });
    throw new AgentInfraError({ status: 0, code: 'network_error', message: `Request to ${path} failed: ${String(error)}`, cause: error });
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener('abort', onAbort);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', cancel);
      resolve();
    }
    function cancel() {
      clearTimeout(timer);
      reject(new AgentInfraError({ status: 0, code: 'aborted', message: 'The call was aborted.', cause: signal?.reason }));
    }
    signal?.addEventListener('abort', cancel, { once: true });
  });
}

/**
 * POSTs `body` as JSON to `/functions/v1/<path>` and returns the parsed JSON
 * answer, repeating the call as {@link isRetryable} allows (`idempotent`:
 * the route is declared safe to repeat) after the delay {@link retryDelayMs} gives.
 * @throws AgentInfraError on a non-2xx answer, a network error, a timeout or an abort.
 */
export async function postJson(
  options: TransportOptions,
  path: string,
  body: unknown,
  idempotent: boolean,
  call: CallOptions = {},
): Promise<unknown> {
  const json = JSON.stringify(body);
  const retries = call.retries ?? options.retry.retries;
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
