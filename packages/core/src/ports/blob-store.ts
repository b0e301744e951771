import type { Readable } from 'node:stream';

/** A time-limited URL for one direct upload or download. */
export interface SignedUrl {
  url: string;
  /** Expiry, ms since the epoch. */
  expiresAt: number;
  /**
   * Headers the client must send with the request besides the body (e.g. a
   * header the store signed), lower-case names. None for the fs adapter; S3
   * upload URLs name `content-length` (a client's HTTP stack normally sends it
   * by itself for a body of known length).
   */
  headers: Record<string, string>;
}

/** Metadata of a stored object. */
export interface BlobStat {
  /** Bytes. */
  size: number;
}

/**
 * Object storage for artifacts and raw mail: local disk (served by the
 * server's own signed URLs) or S3/MinIO (presigned URLs). Checked by
 * `runBlobStoreContract` from `@agentinfra/core/testing`.
 *
 * Keys are path-like strings chosen by modules (`artifacts/<id>/upload`):
 * 1–1024 bytes of UTF-8, segments separated by `/`, no empty, `.` or `..`
 * segment, no leading `/`, no backslash and no control character. Adapters
 * refuse any other key with a `RangeError` before doing any I/O, and never
 * interpret keys beyond that (they are not file paths).
 *
 * Signed URLs are bearer credentials: whoever holds one may perform that one
 * request until it expires; a tampered or expired URL is refused with HTTP 403.
 * Adapters wrap driver failures in their own error class with the driver
 * error as `cause`, and never put credentials in messages.
 */
export interface BlobStore {
  /** Human-readable location without credentials, e.g. `fs (.agentinfra/blobs)` or `s3 (http://minio:9000/bucket)`. */
  describe(): string;
  /**
   * A URL that accepts HTTP PUTs of the object's bytes to `key` until
   * `expiresInSeconds` (1 to 604 800) pass; each successful PUT replaces the
   * object whole (never a partial object). The fs and S3 adapters refuse a
   * body of any size but `size` bytes (fs: 413 or 400; S3: 403, as the
   * signature covers `Content-Length`) and store nothing then; callers still
   * check the size afterwards with {@link BlobStore.stat}, as a store may not.
   * @param options.size bytes the client announced (0 or more).
   * @param options.contentType media type the client is expected to send (S3 may store it; never required).
   */
  createUploadUrl(options: { key: string; size: number; contentType: string; expiresInSeconds: number }): Promise<SignedUrl>;
  /**
   * A URL that serves `key` with GET (and single HTTP Range requests, 206)
   * until `expiresInSeconds` (1 to 604 800) pass, with the given
   * `Content-Type` (else `application/octet-stream` or what the store holds)
   * and `Content-Disposition: attachment; filename="…"` (RFC 6266, with
   * `filename*` for non-ASCII names) when `filename` is set. The bytes are
   * served as stored: never with a `Content-Encoding` (such as `gzip`, which
   * clients would decode) that the uploader sent. A missing object answers 404.
   */
  createDownloadUrl(options: { key: string; expiresInSeconds: number; contentType?: string; filename?: string }): Promise<SignedUrl>;
  /** Writes an object from the server side, streamed, replacing any previous one whole. @returns its size in bytes. */
  put(options: { key: string; body: Readable | Uint8Array; contentType?: string }): Promise<BlobStat>;
  /** Reads an object as a stream. @returns `null` when it does not exist. */
  get(options: { key: string }): Promise<Readable | null>;
  /** Size of an object, or `null` when it does not exist. */
  stat(options: { key: string }): Promise<BlobStat | null>;
  /**
   * Moves an object to another key, replacing what is there. Atomic on disk;
   * a server-side copy then a delete on S3 (readers of `to` see the old or
   * the new object, never a mix). URLs signed for `from` do not follow it.
   * @returns `false` (and changes nothing) when `from` does not exist.
   */
  move(options: { from: string; to: string }): Promise<boolean>;
  /** Deletes objects; missing keys are ignored. */
  delete(options: { keys: readonly string[] }): Promise<void>;
  /** Releases connections or handles; the store is unusable afterwards. */
  close?(): Promise<void>;
}
