import { randomBytes } from 'node:crypto';
import { type Lock, type LockLease, parseLockAcquire } from '@agentinfra/core';
import type { RedisClientType } from 'redis';
import { z } from 'zod';
import { defineLuaScript } from './lua-script.js';
import { wrapRedisErrors } from './redis-adapter-error.js';

const redisLockOptionsSchema = z.object({
  client: z.custom<RedisClientType>((value) => typeof (value as { set?: unknown } | null)?.set === 'function'),
  keyPrefix: z.string().default('agentinfra:'),
  /** How long (ms) a call waits for Redis's answer, sent or not (default 5 000). */
  commandTimeoutMs: z.number().int().positive().default(5_000),
});

/** Options of {@link createRedisLock}. */
export type RedisLockOptions = z.input<typeof redisLockOptionsSchema>;

/** Deletes KEYS[1] only while it still holds this lease's token ARGV[1]. Returns 1 if deleted. */
const releaseScript = defineLuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`);

/**
 * {@link Lock} on Redis, following the single-instance pattern of
 * https://redis.io/docs/latest/develop/use/patterns/distributed-locks/:
 * `SET <keyPrefix>lock:<key> <random token> NX PX <ttlMs>` to acquire, and a
 * Lua compare-and-delete to release, so a lease whose hold expired never frees
 * the next holder's lock. A crashed holder's lock frees itself after `ttlMs`.
 *
 * The caller owns `client` (connected, not closed here); this lock has no `close`.
 * A call that gets no answer within `commandTimeoutMs` (+ 250 ms) sends a PING on the
 * client's connection, and replaces the connection (destroys the client and connects it
 * again) if that PING gets no answer within `commandTimeoutMs` either.
 *
 * @param options.client a connected node-redis v5 client (`createClient()` of the `redis` package, RESP2).
 * @param options.keyPrefix prefix of every key (default `agentinfra:`).
 * @throws ZodError on malformed options. `tryAcquire` throws RangeError on invalid
 *   options; it and `release` throw {@link RedisAdapterError} (driver error as `cause`) when Redis fails
 *   (an acquire that timed out may still have taken the key, which then frees itself after `ttlMs`).
 */
export function createRedisLock(options: RedisLockOptions): Lock {
  const { client, keyPrefix, commandTimeoutMs } = redisLockOptionsSchema.parse(options);

  return {
    async tryAcquire(rawOptions): Promise<LockLease | null> {
      const { key, ttlMs } = parseLockAcquire(rawOptions);
      const redisKey = `${keyPrefix}lock:${key}`;
      const token = randomBytes(16).toString('base64url');
      const reply = await wrapRedisErrors(
        'lock acquire',
        client,
        () => client.set(redisKey, token, { condition: 'NX', expiration: { type: 'PX', value: ttlMs } }),
        commandTimeoutMs,
      );
      if (reply !== 'OK') return null;
      let released = false;
      return {
        async release() {
          if (released) return;
          await wrapRedisErrors('lock release', client, () => releaseScript.run(client, [redisKey], [token]), commandTimeoutMs);
          released = true;
        },
      };
    },
  };
}
