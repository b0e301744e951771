import type { Logger } from 'pino';
import { RateLimitError } from '../errors.js';
import { addressGroup } from '../kernel/client-address.js';
import type { RateLimiter } from '../ports/rate-limiter.js';

const WINDOW_MS = 60_000;

/**
 * Limits failed authentications per client address (#11), IPv6 addresses
 * counted by their /64 network (see `addressGroup`): after `perMinute`
 * failures within a sliding minute, every authentication attempt from that
 * address is refused with 429 until the window has room again, whether or
 * not its credential is valid, so that guessing stops too. Counts live in
 * the rate-limit port (shared by replicas on Redis).
 */
export interface FailedAuthLimit {
  /**
   * Refuses an address that is over the limit.
   * @throws RateLimitError (429) with the window as `Retry-After`.
   */
  check(client: string): Promise<void>;
  /**
   * Counts one failure for `client`; logs once (the reason, never the
   * credential) when this failure uses up the window.
   * @throws RateLimitError when the window was already full (concurrent failures).
   */
  fail(client: string, reason: 'missing' | 'unknown'): Promise<void>;
}

/** Builds the limit; `perMinute` 0 turns it off. */
export function createFailedAuthLimit(options: { perMinute: number; rateLimiter: () => RateLimiter; logger: Logger }): FailedAuthLimit {
  const { perMinute } = options;
  const key = (group: string) => `authfail:${group}`;
  /** The refusal, for a client counted as `group` (see `addressGroup`). */
  const refuse = (group: string) => {
    const from = group.endsWith('/64') ? `your network ${group}` : 'this address';
    return new RateLimitError(`Too many failed authentications from ${from}; at most ${perMinute} per minute.`, WINDOW_MS);
  };
  return {
    async check(client) {
      if (perMinute === 0) return;
      const group = addressGroup(client);
      const failures = await options.rateLimiter().peek({ key: key(group), windowMs: WINDOW_MS });
      if (failures >= perMinute) throw refuse(group);
    },
    async fail(client, reason) {
      if (perMinute === 0) return;
      const group = addressGroup(client);
      const decision = await options.rateLimiter().consume({ key: key(group), limit: perMinute, windowMs: WINDOW_MS });
      if (!decision.allowed) throw refuse(group);
      if (decision.remaining === 0) {
        options.logger.warn(
          { client, counted_as: group, reason, limit_per_minute: perMinute },
          'failed authentications reached the limit; refusing this address (an IPv6 client: its /64)',
        );
      }
    },
  };
}
