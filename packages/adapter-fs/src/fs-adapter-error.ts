/**
 * A file-system operation of the fs blob store failed (permission, disk
 * full, I/O error). `cause` holds the Node error; the message names the
 * operation and the key.
 */
export class FsAdapterError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'FsAdapterError';
  }
}

/** Runs `operation`, rethrowing a failure as {@link FsAdapterError} naming `what` (RangeError and upload size errors pass through). */
export async function wrapFsErrors<T>(what: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof RangeError || error instanceof FsAdapterError || error instanceof UploadSizeError) throw error;
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new FsAdapterError(`fs blob store: ${what} failed (${reason})`, { cause: error });
  }
}

/** The body of an upload was longer (`too_large`) or shorter (`too_small`) than the size its URL was signed for. */
export class UploadSizeError extends Error {
  readonly kind: 'too_large' | 'too_small';
  readonly expected: number;
  constructor(kind: 'too_large' | 'too_small', expected: number) {
    super(kind === 'too_large' ? `The body is longer than ${expected} bytes.` : `The body is shorter than ${expected} bytes.`);
    this.name = 'UploadSizeError';
    this.kind = kind;
    this.expected = expected;
  }
}
