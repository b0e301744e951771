import { createMemoryRateLimiter, type PortMap, type RateDecision, type RateLimiter } from '@agentinfra/core';

/** Default of `smtp.maxRefusedRecipients`: refused recipients one client address group gets within the window. */
export const DEFAULT_MAX_REFUSED_RECIPIENTS = 50;
/** Default of `smtp.refusedRecipientsWindowMs`: one hour. */
export const DEFAULT_REFUSED_RECIPIENTS_WINDOW_MS = 3_600_000;
/** Least time between two warnings that the rate limiter failed. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/**
 * Refused recipients (550 5.1.1) per client address group across sessions,
 * counted in the kernel's rate limiter (Redis when configured, so on every
 * replica) over a sliding window: the per-session limit of
 * `session-limits.ts` alone let a client open session after session and
 * learn which addresses exist, 19 guesses at a time. Once a group has had
 * `limit` refusals within `windowMs`, every `RCPT TO` from it is answered
 * 421 before its address is looked up, an address that exists included, so
 * the answer tells nothing, until enough of those refusals are older than
 * the window.
 */
export interface RefusedRecipients {
  /** Whether `group` has used up its refusals: its `RCPT TO` then gets 421 whatever the address. */
  exhausted(group: string): Promise<boolean>;
  /** Counts one refused recipient of `group`; `false` when it did not fit any more (answer 421 instead of 550). */
  refuse(group: string): Promise<boolean>;
}

/**
 * The counter of refused recipients for one listener. While the rate limiter
 * fails (Redis unreachable), refusals are counted in this process instead,
 * with the same limit and window: a guesser is still stopped after `limit`
 * refusals per replica it reaches, and mail to existing addresses is still
 * accepted (failing closed would turn a Redis outage into an outage of all
 * inbound mail). The failure is logged at most once a minute. The counts of
 * the outage are not carried over to the rate limiter when it answers again.
 */
export function createRefusedRecipients(options: {
  rateLimiter: RateLimiter;
  limit: number;
  windowMs: number;
  logger: PortMap['logger'];
}): RefusedRecipients {
  const { rateLimiter, limit, windowMs, logger } = options;
  const keyOf = (group: string) => `postbox:smtp:refused-rcpt:${group}`;
  const local = createMemoryRateLimiter();
  let lastFailureLog = Number.NEGATIVE_INFINITY;
  const failed = (error: unknown) => {
    const now = Date.now();
    if (now - lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    lastFailureLog = now;
    logger.warn({ err: error }, 'smtp: the rate limiter failed; refused recipients are counted by this process only meanwhile');
  };
  return {
    async exhausted(group) {
      const request = { key: keyOf(group), windowMs };
      try {
        return (await rateLimiter.peek(request)) >= limit;
      } catch (error) {
        failed(error);
        return (await local.peek(request)) >= limit;
      }
    },
    async refuse(group) {
      const request = { key: keyOf(group), limit, windowMs };
      let decision: RateDecision;
      try {
        decision = await rateLimiter.consume(request);
      } catch (error) {
        failed(error);
        decision = await local.consume(request);
      }
      if (decision.allowed && decision.remaining === 0) {
        logger.warn(
          { client: group, limit, window_ms: windowMs },
          'smtp: a client reached the limit of refused recipients; its RCPT TO get 421 until the window passes',
        );
      }
      return decision.allowed;
    },
  };
}
