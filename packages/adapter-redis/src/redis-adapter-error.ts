/**
 * A Redis operation failed (connection refused or lost, command timeout, error
 * reply). `cause` holds the node-redis error; the message names the operation
 * and never holds a password.
 */
export class RedisAdapterError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'RedisAdapterError';
  }
}

/**
 * Runs `operation`, rethrowing any failure as a {@link RedisAdapterError} that
 * names `what`, and failing it after `timeoutMs`: node-redis times a command
 * out only until it is written, so one sent to a server that went silent
 * (no reset) would otherwise wait for ever. (A command that timed out may
 * still run on the server later.)
 */
export async function wrapRedisErrors<T>(what: string, operation: () => Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    return await Promise.race([operation(), deadline]);
  } catch (error) {
    // Driver errors may have an empty message (a command timeout, an AggregateError of connection attempts): name them instead.
    const reason = error instanceof Error ? error.message || error.name : String(error);
    throw new RedisAdapterError(`Redis ${what} failed: ${reason}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
