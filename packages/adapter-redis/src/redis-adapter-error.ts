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

/** Runs `operation`, rethrowing any failure as a {@link RedisAdapterError} that names `what`. */
export async function wrapRedisErrors<T>(what: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    // Driver errors may have an empty message (a command timeout, an AggregateError of connection attempts): name them instead.
    const reason = error instanceof Error ? error.message || error.name : String(error);
    throw new RedisAdapterError(`Redis ${what} failed: ${reason}`, { cause: error });
  }
}
