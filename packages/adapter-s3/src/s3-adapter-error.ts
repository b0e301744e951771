/**
 * An S3 request failed (unreachable endpoint, refused credentials, missing
 * bucket, error reply). `cause` holds the minio client's error; the message
 * names the operation and the S3 error code, never a credential.
 */
export class S3AdapterError extends Error {
  /** The S3 error code (`AccessDenied`, `NoSuchBucket`, …) or the network error code, when known. */
  readonly code: string | undefined;
  constructor(message: string, options: { cause: unknown; code?: string }) {
    super(message, { cause: options.cause });
    this.name = 'S3AdapterError';
    this.code = options.code;
  }
}

/** The S3 or network error code of a minio client error, when it has one. */
export function s3ErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Runs `operation`, rethrowing a failure as {@link S3AdapterError} naming `what` (RangeError passes through). */
export async function wrapS3Errors<T>(what: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof RangeError || error instanceof S3AdapterError) throw error;
    const code = s3ErrorCode(error);
    const reason = code ?? (error instanceof Error ? error.message : String(error));
    throw new S3AdapterError(`S3 ${what} failed: ${reason}`, { cause: error, code });
  }
}
