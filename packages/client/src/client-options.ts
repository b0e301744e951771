import { AgentInfraError } from './errors.js';
import { checkedRetries, DEFAULT_RETRY_POLICY } from './retry-policy.js';
import { timerDelayMs } from './timeout-ms.js';
import type { TransportOptions } from './transport.js';

/** Where `agentinfra serve` listens by default. */
export const DEFAULT_URL = 'http://127.0.0.1:8787';

/** What {@link createClient} takes. */
export interface ClientOptions {
  /**
   * The server's origin; default the `AGENTINFRA_URL` variable, else `http://127.0.0.1:8787` (`agentinfra serve`'s
   * default). A trailing `/functions/v1` is accepted; a user name or password in it is refused.
   */
  url?: string;
  /**
   * Bearer credential (device key `dk_…`, delegation token `dt_…`, bridge key `bk_…`); default the `AGENTINFRA_KEY`
   * variable. Printable ASCII without spaces: a trailing newline is refused, not trimmed.
   */
  key?: string;
  /** The fetch to use (default the global fetch of Node 20+ or the browser). */
  fetch?: typeof globalThis.fetch;
  /**
   * Per attempt in ms (default 30,000; 0 or Infinity: no limit; above 2^31−1, about 24.8 days, that); for artifact
   * transfers the longest wait for progress.
   */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2); see `isRetryable` for which failures are retried. */
  retries?: number;
  /** Largest 2xx response body read, in bytes (default 64 MiB); a larger one throws `invalid_response`. */
  maxResponseBytes?: number;
}

function environment(name: string): string | undefined {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env?.[name] || undefined;
}

function refuse(message: string): AgentInfraError {
  return new AgentInfraError({ status: 0, code: 'invalid_request', message });
}

/** Checks the origin without ever putting it in a message (it may hold a password). */
function checkedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse('url is not an absolute URL (e.g. http://127.0.0.1:8787).');
  }
  if (parsed.username || parsed.password) throw refuse('url must not hold a user name or password; pass the credential as key.');
  if (parsed.search || parsed.hash || url.includes('?') || url.includes('#')) {
    throw refuse('url must not hold a query or a fragment: give the server origin, with a path prefix if any.');
  }
  return url.replace(/\/+$/, '').replace(/\/functions\/v1$/, '');
}

/**
 * The transport options of a client: `options`, else the environment, else the defaults, checked.
 * @throws AgentInfraError status 0 `invalid_request` for a `key` that is not printable ASCII without spaces, a `url`
 *   that is not absolute or holds a user name, password, query or fragment, a negative or NaN `timeoutMs`, `retries`
 *   that are not a whole number 0 or more, or a `maxResponseBytes` that is not above 0. The message never holds the key or the url.
 */
export function transportOptions(options: ClientOptions): TransportOptions {
  const key = options.key ?? environment('AGENTINFRA_KEY');
  if (key !== undefined && !/^[\x21-\x7e]+$/.test(key))
    throw refuse('key must be printable ASCII without spaces or line breaks (a dk_…, dt_… or bk_… credential).');
  const timeoutMs = options.timeoutMs ?? 30_000;
  timerDelayMs(timeoutMs);
  const maxResponseBytes = options.maxResponseBytes ?? 64 * 1024 * 1024;
  if (!(maxResponseBytes > 0)) throw refuse(`maxResponseBytes must be above 0, not ${maxResponseBytes}.`);
  return {
    url: checkedUrl(options.url ?? environment('AGENTINFRA_URL') ?? DEFAULT_URL),
    key,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    timeoutMs,
    maxResponseBytes,
    retry: { ...DEFAULT_RETRY_POLICY, retries: checkedRetries(options.retries ?? DEFAULT_RETRY_POLICY.retries) },
  };
}
