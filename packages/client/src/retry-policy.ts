import { AgentInfraError } from './errors.js';

/** How a call is repeated after a failure. */
export interface RetryPolicy {
  /** Attempts after the first (0 disables retries). */
  retries: number;
  /** First backoff in ms, doubled each attempt with full jitter (AWS "Exponential Backoff and Jitter"). */
  baseDelayMs: number;
  /** Longest wait between attempts in ms, `Retry-After` included (a longer `Retry-After` is not waited for). */
  maxDelayMs: number;
}

/** 2 retries, 200 ms first backoff, at most 10 s between attempts. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 2, baseDelayMs: 200, maxDelayMs: 10_000 };

/**
 * Whether a failed attempt may be repeated: a 429 always (the server did not
 * run the call); a 503 with code `unavailable` (the server's own CONTRACT.md
 * body: a dependency refused before anything was done) always; network errors
 * and other 5xx (a proxy's 503 included: it may have forwarded the call) only
 * when `idempotent` (the call may have run). Never 3xx, other 4xx, timeouts,
 * aborts or other client-side failures.
 */
export function isRetryable(error: AgentInfraError, idempotent: boolean): boolean {
  if (error.status === 429 || (error.status === 503 && error.code === 'unavailable')) return true;
  if (error.status >= 500) return idempotent;
  return error.status === 0 && error.code === 'network_error' && idempotent;
}

/** Share of a `Retry-After` added at random, so that callers refused together do not all come back at the same instant. */
const RETRY_AFTER_SPREAD = 0.2;

/**
 * Milliseconds to wait before retry number `attempt` (1-based): the
 * server's `Retry-After` plus up to 20 % at random when it sent one, else
 * the jittered exponential backoff; `undefined` when `Retry-After` exceeds
 * `maxDelayMs` (give up).
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, error: AgentInfraError, random = Math.random): number | undefined {
  if (error.retryAfterSeconds !== undefined) {
    const ms = error.retryAfterSeconds * 1000;
    return ms > policy.maxDelayMs ? undefined : Math.min(policy.maxDelayMs, ms * (1 + RETRY_AFTER_SPREAD * random()));
  }
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)) * random();
}

/**
 * `retries` when it is a whole number of retries (0 or more).
 * @throws AgentInfraError status 0 `invalid_request` otherwise (NaN, say, which no count of tries reaches).
 */
export function checkedRetries(retries: number): number {
  if (!Number.isSafeInteger(retries) || retries < 0) {
    throw new AgentInfraError({
      status: 0,
      code: 'invalid_request',
      message: `retries must be a whole number, 0 or more, not ${retries}.`,
    });
  }
  return retries;
}
