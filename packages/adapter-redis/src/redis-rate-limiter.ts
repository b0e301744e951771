import { randomUUID } from 'node:crypto';
import {
  parseRateLimitOptions,
  type RateDecision,
  type RateLimiter,
  rateLimitConsumeSchema,
  rateLimitPeekSchema,
  rateLimitRefundSchema,
} from '@agentinfra/core';
import type { RedisClientType } from 'redis';
import { z } from 'zod';
import { wrapRedisErrors } from './redis-adapter-error.js';
import { consumeScript, peekScript, refundScript } from './sliding-window-scripts.js';

const redisRateLimiterOptionsSchema = z.object({
  client: z.custom<RedisClientType>((value) => typeof (value as { evalSha?: unknown } | null)?.evalSha === 'function'),
  keyPrefix: z.string().default('agentinfra:'),
  /** How long (ms) a call waits for Redis's answer, sent or not (default 5 000). */
  commandTimeoutMs: z.number().int().positive().default(5_000),
});

/** Options of {@link createRedisRateLimiter}. */
export type RedisRateLimiterOptions = z.input<typeof redisRateLimiterOptionsSchema>;

const decisionReplySchema = z.tuple([z.number(), z.number(), z.number()]);

/**
 * Redis key names of a rate-limit key: the log and its summed cost. The
 * braces form a Redis Cluster hash tag so both land in one slot.
 */
function rateLimitKeys(keyPrefix: string, key: string): [string, string] {
  const log = `${keyPrefix}ratelimit:{${key}}`;
  return [log, `${log}:total`];
}

/**
 * {@link RateLimiter} on Redis, exact across every replica that shares the
 * server: a sliding-window log in a sorted set, checked and updated by one Lua
 * script per call (atomic), on the Redis server's clock. Refused calls are not
 * counted. Keys are `<keyPrefix>ratelimit:{<key>}` and `…:total`, both
 * expiring `windowMs` after the last counted call; the log holds one member per
 * counted call still in the window (at most `limit`). A call costs one round
 * trip; it reads only the entries that expire, plus, when refused, the oldest
 * entries that must expire for `cost` to fit.
 *
 * The caller owns `client` (connected, not closed here); this limiter has no `close`.
 * A call that gets no answer within `commandTimeoutMs` (+ 250 ms) sends a PING on the
 * client's connection, and replaces the connection (destroys the client and connects it
 * again) if that PING gets no answer within `commandTimeoutMs` either.
 *
 * @param options.client a connected node-redis v5 client (`createClient()` of the `redis` package, RESP2).
 * @param options.keyPrefix prefix of every key (default `agentinfra:`).
 * @throws ZodError on malformed options. `consume`/`peek`/`refund` throw RangeError on invalid
 *   options and {@link RedisAdapterError} (driver error as `cause`) when Redis fails;
 *   a call that timed out may still have been counted.
 */
export function createRedisRateLimiter(options: RedisRateLimiterOptions): RateLimiter {
  const { client, keyPrefix, commandTimeoutMs } = redisRateLimiterOptionsSchema.parse(options);

  return {
    async consume(rawOptions): Promise<RateDecision> {
      const request = parseRateLimitOptions(rateLimitConsumeSchema, rawOptions);
      const reply = await wrapRedisErrors(
        'rate limiter consume',
        client,
        () =>
          consumeScript.run(client, rateLimitKeys(keyPrefix, request.key), [
            String(request.windowMs),
            String(request.limit),
            String(request.cost),
            randomUUID(),
          ]),
        commandTimeoutMs,
      );
      const [allowed, remaining, retryAfterMs] = decisionReplySchema.parse(reply);
      return { allowed: allowed === 1, remaining, retryAfterMs };
    },

    async peek(rawOptions): Promise<number> {
      const request = parseRateLimitOptions(rateLimitPeekSchema, rawOptions);
      const reply = await wrapRedisErrors(
        'rate limiter peek',
        client,
        () => peekScript.run(client, rateLimitKeys(keyPrefix, request.key), [String(request.windowMs)]),
        commandTimeoutMs,
      );
      return z.number().parse(reply);
    },

    async refund(rawOptions): Promise<number> {
      const request = parseRateLimitOptions(rateLimitRefundSchema, rawOptions);
      const reply = await wrapRedisErrors(
        'rate limiter refund',
        client,
        () => refundScript.run(client, rateLimitKeys(keyPrefix, request.key), [String(request.windowMs), String(request.cost)]),
        commandTimeoutMs,
      );
      return z.number().parse(reply);
    },
  };
}
