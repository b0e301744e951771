import type { Logger } from 'pino';
import { publicReason } from '../dependency-failure.js';
import type { Clock } from '../ports/clock.js';
import type { RateDecision, RateLimiter } from '../ports/rate-limiter.js';

/** How long (ms) the store may take to answer a rate-limit check before the request goes on unlimited. */
const RATE_LIMIT_DEADLINE_MS = 250;
/** After a failed check, checks skip the store this long (ms) before asking it again. */
const PAUSE_MS = 5_000;

/**
 * `work`'s answer, or a rejection once {@link RATE_LIMIT_DEADLINE_MS} has passed without one.
 * When the deadline's timer fires, the sockets get one turn of the event loop first: after
 * this process stalled (a long synchronous task, a GC pause), Node runs expired timers
 * before it reads the answers that arrived meanwhile, and a healthy store must not be
 * taken for a dead one (that would switch the limits off for anyone who can stall it).
 */
async function withinDeadline<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => setImmediate(() => reject(new Error(`no answer within ${RATE_LIMIT_DEADLINE_MS} ms`))),
      RATE_LIMIT_DEADLINE_MS,
    );
    timer.unref();
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Wraps the rate limiter of the HTTP request path so that an outage of its
 * store (Redis) costs a request at most 250 ms and never fails it: a check
 * that throws or takes longer is counted as allowed (`peek` as 0), the
 * failure is logged once and counted (`onFailure`), and for the next 5 s
 * checks do not ask the store at all (fail open, as Envoy's rate-limit
 * filter does by default). Rate limits are a defence against floods, not an
 * authorization: credentials are still checked on every request. Quotas
 * that guard a resource (the postbox send quota) use the port directly and
 * fail closed.
 * @param options.limiter the store's limiter, resolved on each call.
 */
export function failOpenRateLimiter(options: {
  limiter: () => RateLimiter;
  clock: Clock;
  logger: Logger;
  onFailure?: () => void;
}): RateLimiter {
  const { clock, logger } = options;
  let failedAt: number | null = null;

  async function ask<T>(call: () => Promise<T>, unlimited: T): Promise<T> {
    if (failedAt !== null && clock.now() - failedAt < PAUSE_MS) return unlimited;
    try {
      const answer = await withinDeadline(call());
      if (failedAt !== null) logger.info('rate limiter answers again; requests are rate-limited again');
      failedAt = null;
      return answer;
    } catch (error) {
      // A refused argument is the caller's mistake, not an outage: it must not switch the limits off.
      if (error instanceof RangeError) throw error;
      options.onFailure?.();
      if (failedAt === null) {
        logger.warn({ reason: (error as Error).message }, 'rate limiter unreachable; requests are not rate-limited until it answers');
      }
      failedAt = clock.now();
      return unlimited;
    }
  }

  return {
    consume: (request) =>
      ask<RateDecision>(() => options.limiter().consume(request), { allowed: true, remaining: request.limit, retryAfterMs: 0 }),
    peek: (request) => ask(() => options.limiter().peek(request), 0),
    refund: (request) => ask(() => options.limiter().refund(request), 0),
  };
}

/**
 * Asks `limiter` for a count (a read) within the same deadline as requests.
 * @returns `ok`, or `unreachable: <reason>`, for `/ready`'s `checks.rate_limiter`.
 */
export async function probeRateLimiter(limiter: RateLimiter): Promise<string> {
  try {
    await withinDeadline(limiter.peek({ key: 'ready-probe', windowMs: 1_000 }));
    return 'ok';
  } catch (error) {
    return `unreachable: ${publicReason(error)}`;
  }
}
