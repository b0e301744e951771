import { createHash } from 'node:crypto';
import type { RedisClientType } from 'redis';

/** A Lua script run by SHA1 (`EVALSHA`), sent in full (`EVAL`) only when the server does not have it cached. */
export interface LuaScript {
  /** Runs the script with `keys` (KEYS[]) and `args` (ARGV[]) and returns the raw reply. */
  run(client: RedisClientType, keys: string[], args: string[]): Promise<unknown>;
}

/** Wraps Lua `source` (Redis scripting, https://redis.io/docs/latest/develop/interact/programmability/eval-intro/). */
export function defineLuaScript(source: string): LuaScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return {
    async run(client, keys, args) {
      try {
        return await client.evalSha(sha, { keys, arguments: args });
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return client.eval(source, { keys, arguments: args });
      }
    },
  };
}
