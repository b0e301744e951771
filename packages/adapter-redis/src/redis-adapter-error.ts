import { DependencyUnavailableError } from '@agentinfra/core';
import { ClientClosedError, ClientOfflineError, type RedisClientType, TimeoutError } from 'redis';
import { checkUnansweredConnection } from './redis-connection.js';

/**
 * A Redis operation failed (connection refused or lost, command timeout, error
 * reply). `cause` holds the node-redis error; the message names the operation
 * and never holds a password. When the command was certainly never written
 * to Redis (see {@link wrapRedisErrors}), the cause is a
 * {@link DependencyUnavailableError} wrapping the driver error, and the kernel
 * answers the request 503 `unavailable`; otherwise the command may have run
 * and the request gets 500.
 */
export class RedisAdapterError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'RedisAdapterError';
  }
}

/** How much longer (ms) than node-redis's own command timeout the deadline below waits. */
const DEADLINE_MARGIN_MS = 250;

/**
 * Whether node-redis failed `error`'s command before writing it: its own
 * command timeout (which drops a command still waiting to be written), or a
 * closed or offline client.
 */
function neverWritten(error: unknown): boolean {
  return error instanceof TimeoutError || error instanceof ClientClosedError || error instanceof ClientOfflineError;
}

/**
 * Runs `operation` on `client`, rethrowing any failure as a
 * {@link RedisAdapterError} that names `what`. node-redis times a command out
 * (`commandOptions.timeout`, the same `timeoutMs`) only until it is written,
 * so one sent to a server that went silent (no reset) would otherwise wait for
 * ever: this fails it `timeoutMs` + 250 ms after the call, late enough that
 * node-redis's own timeout reports an unwritten command first, and checks the
 * connection ({@link checkUnansweredConnection}): one that went silent is
 * replaced, so that later calls reach Redis again, one whose server was only
 * slow is kept. (A command that timed out here may still run on the server
 * later.)
 */
export async function wrapRedisErrors<T>(
  what: string,
  client: RedisClientType,
  operation: () => Promise<T>,
  timeoutMs: number,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new Error(`no answer within ${timeoutMs} ms`));
        checkUnansweredConnection(client, timeoutMs);
      }, timeoutMs + DEADLINE_MARGIN_MS);
      timer.unref();
    });
    return await Promise.race([operation(), deadline]);
  } catch (error) {
    // Driver errors may have an empty message (a command timeout, an AggregateError of connection attempts): name them instead.
    const reason = error instanceof Error ? error.message || error.name : String(error);
    const cause = neverWritten(error)
      ? new DependencyUnavailableError(`Redis did not take the ${what} command`, { cause: error, dependency: 'Redis server' })
      : error;
    throw new RedisAdapterError(`Redis ${what} failed: ${reason}`, { cause });
  } finally {
    clearTimeout(timer);
  }
}
