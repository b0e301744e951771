import type { Lock, RateLimiter } from '@agentinfra/core';
import { createClient, ErrorReply, type RedisClientType } from 'redis';
import { z } from 'zod';
import { RedisAdapterError } from './redis-adapter-error.js';
import { closeRedisClient, isClosing } from './redis-connection.js';
import { createRedisLock } from './redis-lock.js';
import { createRedisRateLimiter } from './redis-rate-limiter.js';
import { redactRedisUrl, redisUrlSchema } from './redis-url.js';

const redisAdaptersOptionsSchema = z.object({
  url: redisUrlSchema,
  keyPrefix: z.string().default('agentinfra:'),
  connectTimeoutMs: z.number().int().positive().default(10_000),
  commandTimeoutMs: z.number().int().positive().default(5_000),
  onError: z.custom<(error: RedisAdapterError) => void>((value) => typeof value === 'function').optional(),
});

/**
 * Options of {@link createRedisAdapters}:
 * - `url`: `redis[s]://[[user][:password]@]host[:port][/db]`;
 * - `keyPrefix`: prefix of every key (default `agentinfra:`);
 * - `connectTimeoutMs`: how long the first connection may take, retries included (default 10 000);
 * - `commandTimeoutMs`: how long a call may wait, including while reconnecting and after its
 *   command was sent to a server that went silent (default 5 000; such a call also sends a
 *   PING on the connection, and replaces the connection with a new one if that PING gets no
 *   answer within `commandTimeoutMs` either);
 * - `onError`: told about connection errors (lost connection, failed reconnect attempt);
 *   calls made meanwhile wait for the reconnection or fail on their own.
 */
export type RedisAdaptersOptions = z.input<typeof redisAdaptersOptionsSchema>;

/** The Redis-backed ports, sharing one connection. */
export interface RedisAdapters {
  /** The node-redis client, for other uses of the same connection (close it only through {@link close}). */
  readonly client: RedisClientType;
  readonly rateLimiter: RateLimiter;
  readonly lock: Lock;
  /** Where the adapters point, without the password, e.g. `redis://:***@cache:6379/0`. */
  describe(): string;
  /**
   * Waits for the answers to calls already sent (at most `commandTimeoutMs`), then closes the
   * connection, answered or not (calls made meanwhile may fail). While reconnecting, it ends
   * the reconnection and resolves once no timer or socket of it is left (at most
   * `commandTimeoutMs` + ~7 s). Idempotent.
   */
  close(): Promise<void>;
}

/** Exponential back-off between reconnection attempts, capped at 2 s, with jitter (ms). */
/**
 * Whether Redis refused the connection's credentials (AUTH or HELLO: wrong
 * password, unknown user, or a password sent to a server without one).
 * Trying again cannot help until someone changes the configuration.
 */
function refusedCredentials(cause: unknown): boolean {
  return cause instanceof ErrorReply && /^(WRONGPASS|NOAUTH|NOPERM|ERR (AUTH|invalid (username|password)))/.test(cause.message);
}

function reconnectDelay(retries: number): number {
  return Math.min(2 ** retries * 50, 2_000) + Math.floor(Math.random() * 100);
}

/**
 * Connects one node-redis client and builds {@link createRedisRateLimiter} and
 * {@link createRedisLock} on it. Once connected the client reconnects forever
 * with back-off; calls queue meanwhile and fail after `commandTimeoutMs`. A
 * connection that goes silent is replaced once a call and then a PING get no
 * answer on it.
 *
 * @returns once the connection is ready.
 * @throws ZodError on malformed options; {@link RedisAdapterError} (driver error as
 *   `cause`, password redacted from the message) when Redis cannot be reached or
 *   refuses the credentials within `connectTimeoutMs`.
 */
export async function createRedisAdapters(options: RedisAdaptersOptions): Promise<RedisAdapters> {
  const { url, keyPrefix, connectTimeoutMs, commandTimeoutMs, onError } = redisAdaptersOptionsSchema.parse(options);
  const location = redactRedisUrl(url);
  const startedAt = Date.now();
  let ready = false;
  const client: RedisClientType = createClient({
    url,
    commandOptions: { timeout: commandTimeoutMs },
    socket: {
      connectTimeout: Math.min(connectTimeoutMs, 5_000),
      reconnectStrategy: (retries, cause) => {
        // Closing: the attempt that just failed is the last, and no delay outlives close().
        if (isClosing(client)) return cause;
        const delay = reconnectDelay(retries);
        // At start a refused password fails at once: an operator typo should not cost the whole connect timeout.
        if (!ready && refusedCredentials(cause)) return cause;
        if (!ready && Date.now() - startedAt + delay > connectTimeoutMs) return cause;
        return delay;
      },
    },
  });
  client.on('ready', () => {
    ready = true;
  });
  client.on('error', (error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    onError?.(new RedisAdapterError(`Redis connection to ${location}: ${reason}`, { cause: error }));
  });

  try {
    await client.connect();
  } catch (error) {
    if (client.isOpen) client.destroy();
    const reason = error instanceof Error ? error.message : String(error);
    throw new RedisAdapterError(`Cannot connect to Redis at ${location}: ${reason}`, { cause: error });
  }

  let closed: Promise<void> | undefined;
  return {
    client,
    rateLimiter: createRedisRateLimiter({ client, keyPrefix, commandTimeoutMs }),
    lock: createRedisLock({ client, keyPrefix, commandTimeoutMs }),
    describe: () => location,
    close() {
      closed ??= closeRedisClient(client, commandTimeoutMs);
      return closed;
    },
  };
}
