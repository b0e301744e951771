import { z } from 'zod';
import type { Clock } from '../ports/clock.js';
import { systemClock } from '../ports/clock.js';
import type { RateDecision, RateLimiter } from '../ports/rate-limiter.js';
import { amortisedSweep } from './amortised-sweep.js';

/**
 * Options of {@link RateLimiter.consume}, as every implementation validates them:
 * `key` non-empty; `limit`, `windowMs` (milliseconds) and `cost` (units, default 1)
 * positive integers; `cost <= limit`, since a larger cost could never be allowed.
 */
export const rateLimitConsumeSchema = z
  .object({
    key: z.string().min(1),
    limit: z.number().int().positive(),
    windowMs: z.number().int().positive(),
    cost: z.number().int().positive().default(1),
  })
  .refine((options) => options.cost <= options.limit, {
    message: 'cost exceeds limit, so the request could never be allowed',
    path: ['cost'],
  });

/** Options of {@link RateLimiter.peek}: `key` non-empty, `windowMs` a positive integer (milliseconds). */
export const rateLimitPeekSchema = z.object({
  key: z.string().min(1),
  windowMs: z.number().int().positive(),
});

/** Options of {@link RateLimiter.refund}: `key` non-empty; `windowMs` and `cost` (default 1) positive integers. */
export const rateLimitRefundSchema = z.object({
  key: z.string().min(1),
  windowMs: z.number().int().positive(),
  cost: z.number().int().positive().default(1),
});

/** Validated {@link RateLimiter.consume} options (`cost` filled in). */
export type RateLimitConsume = z.output<typeof rateLimitConsumeSchema>;
/** Validated {@link RateLimiter.peek} options. */
export type RateLimitPeek = z.output<typeof rateLimitPeekSchema>;
/** Validated {@link RateLimiter.refund} options (`cost` filled in). */
export type RateLimitRefund = z.output<typeof rateLimitRefundSchema>;

/**
 * Parses `options` with `schema`.
 * @throws RangeError naming the offending fields (a caller's bug, not a refusal), with the ZodError as `cause`.
 */
export function parseRateLimitOptions<S extends z.ZodType>(schema: S, options: unknown): z.output<S> {
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    throw new RangeError(`Invalid rate limit options: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  }
  return parsed.data;
}

const memoryRateLimiterOptionsSchema = z.object({
  clock: z.custom<Clock>((value) => typeof (value as Partial<Clock> | undefined)?.now === 'function').optional(),
});

/** Options of {@link createMemoryRateLimiter}. */
export type MemoryRateLimiterOptions = z.input<typeof memoryRateLimiterOptionsSchema>;

/** An in-process {@link RateLimiter} that also reports how many keys it tracks. */
export interface MemoryRateLimiter extends RateLimiter {
  /** Keys currently holding counted units (expired keys are dropped as calls go on). */
  readonly size: number;
}

interface Entry {
  /** When the units were counted (ms since the epoch). */
  at: number;
  cost: number;
}

/** The log of one key: entries oldest first from `head`, their summed cost, and the last window used. */
interface Bucket {
  entries: Entry[];
  head: number;
  used: number;
  windowMs: number;
}

/**
 * In-process sliding-window-log rate limiter for the embedded default (one process).
 *
 * Each allowed call stores `(time, cost)` for its key; a unit counts while
 * `now < time + windowMs`. Refused calls store nothing. When refused,
 * `retryAfterMs` is the time until enough of the oldest units expire for this
 * `cost` to fit. A key is meant to be used with one `windowMs`.
 *
 * Memory is bounded: a key holds at most `limit` entries, expired entries are
 * pruned on each call, and idle keys are swept every so many calls. No timer is
 * started, so it never keeps the process alive.
 *
 * @param options.clock time source (default the system clock), injectable for tests.
 * @throws ZodError when `options` is malformed; `consume`/`peek` throw RangeError on invalid options.
 */
export function createMemoryRateLimiter(options: MemoryRateLimiterOptions = {}): MemoryRateLimiter {
  const clock = memoryRateLimiterOptionsSchema.parse(options).clock ?? systemClock;
  const buckets = new Map<string, Bucket>();
  function prune(bucket: Bucket, now: number, windowMs: number): void {
    let entry = bucket.entries[bucket.head];
    while (entry !== undefined && entry.at + windowMs <= now) {
      bucket.used -= entry.cost;
      bucket.head += 1;
      entry = bucket.entries[bucket.head];
    }
    if (bucket.head > 32 && bucket.head * 2 > bucket.entries.length) {
      bucket.entries = bucket.entries.slice(bucket.head);
      bucket.head = 0;
    }
  }

  /** Idle keys go: a bucket with no unit left in its window after pruning. */
  const sweep = amortisedSweep(buckets, (bucket, now) => {
    prune(bucket, now, bucket.windowMs);
    return bucket.used <= 0;
  });

  function retryAfter(bucket: Bucket, now: number, request: RateLimitConsume): number {
    const toFree = bucket.used + request.cost - request.limit;
    let freed = 0;
    for (let index = bucket.head; index < bucket.entries.length; index += 1) {
      const entry = bucket.entries[index] as Entry;
      freed += entry.cost;
      if (freed >= toFree) return entry.at + request.windowMs - now;
    }
    return request.windowMs;
  }

  return {
    get size() {
      return buckets.size;
    },

    async consume(rawOptions): Promise<RateDecision> {
      const request = parseRateLimitOptions(rateLimitConsumeSchema, rawOptions);
      const now = clock.now();
      sweep(now);
      let bucket = buckets.get(request.key);
      if (bucket === undefined) {
        bucket = { entries: [], head: 0, used: 0, windowMs: request.windowMs };
        buckets.set(request.key, bucket);
      }
      prune(bucket, now, request.windowMs);
      bucket.windowMs = request.windowMs;
      if (bucket.used + request.cost <= request.limit) {
        const last = bucket.entries[bucket.entries.length - 1];
        bucket.entries.push({ at: Math.max(now, last?.at ?? now), cost: request.cost });
        bucket.used += request.cost;
        return { allowed: true, remaining: request.limit - bucket.used, retryAfterMs: 0 };
      }
      return {
        allowed: false,
        remaining: Math.max(0, request.limit - bucket.used),
        retryAfterMs: retryAfter(bucket, now, request),
      };
    },

    async peek(rawOptions): Promise<number> {
      const request = parseRateLimitOptions(rateLimitPeekSchema, rawOptions);
      const bucket = buckets.get(request.key);
      if (bucket === undefined) return 0;
      const now = clock.now();
      let used = 0;
      for (let index = bucket.head; index < bucket.entries.length; index += 1) {
        const entry = bucket.entries[index] as Entry;
        if (entry.at + request.windowMs > now) used += entry.cost;
      }
      return used;
    },

    async refund(rawOptions): Promise<number> {
      const request = parseRateLimitOptions(rateLimitRefundSchema, rawOptions);
      const bucket = buckets.get(request.key);
      if (bucket === undefined) return 0;
      prune(bucket, clock.now(), request.windowMs);
      let refunded = 0;
      while (refunded < request.cost && bucket.entries.length > bucket.head) {
        const last = bucket.entries[bucket.entries.length - 1] as Entry;
        const taken = Math.min(last.cost, request.cost - refunded);
        last.cost -= taken;
        if (last.cost === 0) bucket.entries.pop();
        refunded += taken;
      }
      bucket.used -= refunded;
      return refunded;
    },
  };
}
