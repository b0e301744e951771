import { Readable } from 'node:stream';
import { assertStorageKey, type BlobStore, type Clock, type HttpMount, systemClock } from '@agentinfra/core';
import { z } from 'zod';
import { urlPathOfKey } from './blob-url-path.js';
import { wrapFsErrors } from './fs-adapter-error.js';
import { createObjectFolder } from './object-folder.js';
import { createSignedUrlMount } from './signed-url-mount.js';
import { type SignedFields, signedQuery } from './url-signature.js';

const MAX_EXPIRY_SECONDS = 604_800;
/** Read size of the streams `get` returns (large reads make hashing a read-back faster). */
const READ_CHUNK = 1 << 20;

const fsBlobStoreOptionsSchema = z.object({
  dir: z.string().min(1),
  publicUrl: z.union([
    z.url({ protocol: /^https?$/ }),
    z.custom<() => string>((value) => typeof value === 'function', 'must be a URL or a function'),
  ]),
  signingKey: z.union([
    z.string().min(32, 'must be at least 32 characters'),
    z.instanceof(Uint8Array).refine((key) => key.length >= 32, 'must be at least 32 bytes'),
  ]),
  basePath: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'must be a path like /storage/v1/object')
    .default('/storage/v1/object'),
  durable: z.boolean().default(true),
  clock: z
    .custom<Clock>((value) => typeof value === 'object' && value !== null && typeof (value as Clock).now === 'function', 'must be a Clock')
    .optional(),
});

/**
 * Options of {@link createFsBlobStore}:
 * - `dir`: folder for the objects (`objects/`) and writes in progress (`tmp/`), created if missing;
 * - `publicUrl`: base URL clients reach the server at (`https://files.example.com`), or a
 *   function returning it (for a server listening on port 0); a trailing `/` is ignored;
 * - `signingKey`: HMAC-SHA256 key for the URLs, at least 32 bytes (or characters); derive it
 *   from the master key (HKDF) so it survives restarts and is shared by replicas;
 * - `basePath`: where the mount serves the URLs (default `/storage/v1/object`);
 * - `durable`: fsync each object before it becomes visible, and the folders a put, move or delete changed
 *   before it returns, so that what it acknowledged survives a power loss (default true);
 * - `clock`: time source for expiries (default the wall clock).
 */
export type FsBlobStoreOptions = z.input<typeof fsBlobStoreOptionsSchema>;

/** The local-disk store and the HTTP endpoint that serves its signed URLs. */
export interface FsBlobStore {
  store: BlobStore;
  /** Give it to the kernel (`KernelAdapters.mounts`) so the server answers the URLs itself. */
  mount: HttpMount;
}

function checkExpiry(seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_EXPIRY_SECONDS) {
    throw new RangeError(`expiresInSeconds must be an integer from 1 to ${MAX_EXPIRY_SECONDS}, got ${seconds}.`);
  }
}

/**
 * A {@link BlobStore} on local disk whose upload and download URLs the server
 * answers itself through {@link FsBlobStore.mount}. URLs carry an expiry and an
 * HMAC-SHA256 signature over method, key, expiry and the bound size (PUT) or
 * Content-Type and filename (GET), checked in constant time. Uploads are
 * streamed to a temp file and renamed into place, so an object is always whole.
 *
 * @throws ZodError on invalid options; Error when `dir` cannot be created.
 * Store methods throw RangeError on an invalid key and {@link FsAdapterError}
 * (Node error as `cause`) when the file system fails.
 */
export function createFsBlobStore(options: FsBlobStoreOptions): FsBlobStore {
  const parsed = fsBlobStoreOptionsSchema.parse(options);
  const clock = parsed.clock ?? systemClock;
  const secret = typeof parsed.signingKey === 'string' ? Buffer.from(parsed.signingKey, 'utf8') : Buffer.from(parsed.signingKey);
  const folder = createObjectFolder({ dir: parsed.dir, durable: parsed.durable });
  const basePath = parsed.basePath;

  const baseUrl = (): string => {
    const value = typeof parsed.publicUrl === 'function' ? parsed.publicUrl() : parsed.publicUrl;
    if (!URL.canParse(value)) throw new Error(`fs blob store: publicUrl gave ${JSON.stringify(value)}, not an absolute URL.`);
    return value.replace(/\/+$/, '');
  };

  const sign = (fields: SignedFields) => ({
    url: `${baseUrl()}${basePath}/${urlPathOfKey(fields.key)}?${signedQuery(secret, fields)}`,
    expiresAt: fields.expires,
    headers: {},
  });

  const store: BlobStore = {
    describe: () => `fs (${parsed.dir})`,
    async createUploadUrl({ key, size, expiresInSeconds }) {
      assertStorageKey(key);
      checkExpiry(expiresInSeconds);
      if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`size must be a non-negative integer, got ${size}.`);
      return sign({ method: 'PUT', key, size, expires: clock.now() + expiresInSeconds * 1000 });
    },
    async createDownloadUrl({ key, expiresInSeconds, contentType, filename }) {
      assertStorageKey(key);
      checkExpiry(expiresInSeconds);
      return sign({ method: 'GET', key, type: contentType, filename, expires: clock.now() + expiresInSeconds * 1000 });
    },
    async put({ key, body }) {
      assertStorageKey(key);
      const source = body instanceof Uint8Array ? Readable.from([body]) : body;
      return wrapFsErrors(`put ${key}`, async () => ({ size: await folder.write({ key, source }) }));
    },
    async get({ key }) {
      assertStorageKey(key);
      const handle = await wrapFsErrors(`get ${key}`, () => folder.open(key));
      return handle ? handle.createReadStream({ highWaterMark: READ_CHUNK }) : null;
    },
    async stat({ key }) {
      assertStorageKey(key);
      const size = await wrapFsErrors(`stat ${key}`, () => folder.size(key));
      return size === null ? null : { size };
    },
    async move({ from, to }) {
      assertStorageKey(from);
      assertStorageKey(to);
      return wrapFsErrors(`move ${from} to ${to}`, () => folder.move(from, to));
    },
    async delete({ keys }) {
      for (const key of keys) assertStorageKey(key);
      await wrapFsErrors('delete', () => folder.remove(keys));
    },
    async close() {
      folder.close();
    },
  };

  return { store, mount: createSignedUrlMount({ basePath, folder, secret, clock }) };
}
