import { Readable } from 'node:stream';
import type { BlobStore } from '@agentinfra/core';
import { assertStorageKey } from '@agentinfra/core';
import { create as contentDisposition } from 'content-disposition';
import { Client, type ClientOptions } from 'minio';
import { z } from 'zod';
import { presignLengthBoundPut } from './length-bound-put-url.js';
import { S3AdapterError, s3ErrorCode, wrapS3Errors } from './s3-adapter-error.js';

const MAX_EXPIRY_SECONDS = 604_800;
/** Part size for streamed puts of unknown length: bounds the memory one put holds (minio's default would be ~550 MiB). */
const PART_SIZE = 16 * 1024 * 1024;
const MISSING = new Set(['NoSuchKey', 'NotFound']);

const endpointUrl = z.url({ protocol: /^https?$/ });

const s3BlobStoreOptionsSchema = z
  .object({
    url: endpointUrl.optional(),
    endPoint: z.string().min(1).optional(),
    port: z.number().int().min(1).max(65_535).optional(),
    useSSL: z.boolean().default(true),
    bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid S3 bucket name (3–63 of a-z 0-9 . -)'),
    accessKey: z.string().min(1),
    secretKey: z.string().min(1),
    sessionToken: z.string().min(1).optional(),
    region: z.string().min(1).default('us-east-1'),
    pathStyle: z.boolean().default(true),
    prefix: z
      .string()
      .regex(/^([^/\\][^\\]*\/)?$/, 'must be empty or end with "/" (and not start with it)')
      .default(''),
    createBucket: z.boolean().default(false),
    publicUrl: endpointUrl.optional(),
  })
  .refine((options) => (options.url === undefined) !== (options.endPoint === undefined), {
    message: 'give exactly one of url or endPoint',
    path: ['url'],
  });

/**
 * Options of {@link createS3BlobStore}:
 * - `url` (`http://127.0.0.1:9000`, `https://s3.eu-west-1.amazonaws.com`) or `endPoint`
 *   (host name) with `port` and `useSSL` (default true): where the server reaches S3;
 * - `bucket`; `accessKey`, `secretKey` and optional `sessionToken`;
 * - `region` (default `us-east-1`; MinIO accepts any);
 * - `pathStyle` (default true: `host/bucket/key`, what MinIO and most S3-compatible stores
 *   want; set false for AWS virtual-hosted style);
 * - `prefix`: prepended to every key, e.g. `agentinfra/` (default none);
 * - `createBucket`: create the bucket when it is missing (default false: refuse to start);
 * - `publicUrl`: the endpoint clients use when it differs from `url` (e.g. the server talks to
 *   `http://minio:9000` inside a network, clients to `https://files.example.com`); presigned
 *   URLs are signed for that host.
 */
export type S3BlobStoreOptions = z.input<typeof s3BlobStoreOptionsSchema>;

type ParsedOptions = z.output<typeof s3BlobStoreOptionsSchema>;

function clientOptions(options: ParsedOptions, url: string | undefined): ClientOptions {
  const common = {
    accessKey: options.accessKey,
    secretKey: options.secretKey,
    sessionToken: options.sessionToken,
    region: options.region,
    pathStyle: options.pathStyle,
    partSize: PART_SIZE,
  };
  if (url === undefined) return { ...common, endPoint: options.endPoint as string, port: options.port, useSSL: options.useSSL };
  const parsed = new URL(url);
  const useSSL = parsed.protocol === 'https:';
  return {
    ...common,
    endPoint: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port ? Number(parsed.port) : useSSL ? 443 : 80,
    useSSL,
  };
}

const asBuffer = (chunk: unknown): Buffer =>
  Buffer.isBuffer(chunk)
    ? chunk
    : Buffer.from((chunk as Uint8Array).buffer, (chunk as Uint8Array).byteOffset, (chunk as Uint8Array).byteLength);

/**
 * Reads `body` until it ends or passes `limit` bytes.
 * @returns `whole` when it ended within the limit, else `stream`: the whole body again as Buffers.
 */
async function readHead(body: Readable, limit: number): Promise<{ whole: Buffer } | { stream: AsyncIterable<Buffer> }> {
  const chunks: Buffer[] = [];
  let length = 0;
  const iterator = body[Symbol.asyncIterator]();
  while (length <= limit) {
    const next = await iterator.next();
    if (next.done) return { whole: Buffer.concat(chunks) };
    const chunk = asBuffer(next.value);
    chunks.push(chunk);
    length += chunk.length;
  }
  async function* replay(): AsyncIterable<Buffer> {
    yield* chunks.splice(0);
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield asBuffer(next.value);
  }
  return { stream: replay() };
}

function checkExpiry(seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_EXPIRY_SECONDS) {
    throw new RangeError(`expiresInSeconds must be an integer from 1 to ${MAX_EXPIRY_SECONDS}, got ${seconds}.`);
  }
}

/**
 * A {@link BlobStore} on S3 or any S3-compatible store (MinIO, Ceph RGW,
 * Cloudflare R2, Backblaze B2, Garage …) through the `minio` client. Upload and
 * download URLs are SigV4 presigned PUT and GET URLs. Upload URLs sign
 * `content-length` as well as `host` (see {@link presignLengthBoundPut}), so
 * S3 refuses a body of any other size with 403; their `headers` name
 * `content-length`. Downloads set `response-content-type`,
 * `response-content-disposition` and `response-content-encoding: identity`,
 * so a `Content-Encoding` sent with the upload never makes a client decode
 * the bytes (they stay what `stat` and `get` see). Checks that the bucket
 * exists (creating it when `createBucket` is set) before returning.
 *
 * @throws ZodError on invalid options; {@link S3AdapterError} (minio error as `cause`)
 *   when S3 cannot be reached, refuses the credentials, or the bucket is missing.
 * Store methods throw RangeError on an invalid key and {@link S3AdapterError} on S3 failures.
 */
export async function createS3BlobStore(options: S3BlobStoreOptions): Promise<BlobStore> {
  const parsed = s3BlobStoreOptionsSchema.parse(options);
  const { bucket, prefix } = parsed;
  const connection = clientOptions(parsed, parsed.url);
  const client = new Client(connection);
  const signer = parsed.publicUrl ? new Client(clientOptions(parsed, parsed.publicUrl)) : client;
  // Built from the parsed parts, so credentials written into `url` never reach messages.
  const host = connection.endPoint.includes(':') ? `[${connection.endPoint}]` : connection.endPoint;
  const location = `${connection.useSSL ? 'https' : 'http'}://${host}${connection.port ? `:${connection.port}` : ''}/${bucket}${prefix ? `/${prefix}` : ''}`;
  const name = (key: string) => {
    assertStorageKey(key);
    return prefix + key;
  };

  await wrapS3Errors(`checking bucket ${bucket} at ${location}`, async () => {
    if (await client.bucketExists(bucket)) return;
    if (!parsed.createBucket) {
      throw new S3AdapterError(`S3 bucket "${bucket}" does not exist at ${location}; create it or set createBucket.`, {
        cause: undefined,
        code: 'NoSuchBucket',
      });
    }
    try {
      await client.makeBucket(bucket, parsed.region);
    } catch (error) {
      // Another replica may have created it meanwhile.
      if (!['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(s3ErrorCode(error) ?? '')) throw error;
    }
  });

  const ifPresent = async <T>(operation: () => Promise<T>): Promise<T | null> => {
    try {
      return await operation();
    } catch (error) {
      if (MISSING.has(s3ErrorCode(error) ?? '')) return null;
      throw error;
    }
  };

  return {
    describe: () => `s3 (${location})`,
    async createUploadUrl({ key, size, expiresInSeconds }) {
      const object = name(key);
      checkExpiry(expiresInSeconds);
      if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`size must be a non-negative integer, got ${size}.`);
      const expiresAt = Date.now() + expiresInSeconds * 1000;
      // minio's own presigned URL places the object (path-style or virtual-hosted, endpoint, port); its signature,
      // which leaves the length free, is replaced by one that binds it.
      const unbound = await wrapS3Errors(`presigning PUT ${key}`, () => signer.presignedPutObject(bucket, object, expiresInSeconds));
      const objectUrl = new URL(unbound);
      objectUrl.search = '';
      const url = presignLengthBoundPut({
        objectUrl,
        size,
        expiresInSeconds,
        region: parsed.region,
        accessKey: parsed.accessKey,
        secretKey: parsed.secretKey,
        sessionToken: parsed.sessionToken,
      });
      return { url, expiresAt, headers: { 'content-length': String(size) } };
    },
    async createDownloadUrl({ key, expiresInSeconds, contentType, filename }) {
      const object = name(key);
      checkExpiry(expiresInSeconds);
      // Served as stored: an upload sent with `Content-Encoding: gzip` keeps that header, and clients would inflate it.
      const overrides: Record<string, string> = { 'response-content-encoding': 'identity' };
      if (contentType !== undefined) overrides['response-content-type'] = contentType;
      if (filename !== undefined) overrides['response-content-disposition'] = contentDisposition(filename);
      const expiresAt = Date.now() + expiresInSeconds * 1000;
      const url = await wrapS3Errors(`presigning GET ${key}`, () => signer.presignedGetObject(bucket, object, expiresInSeconds, overrides));
      return { url, expiresAt, headers: {} };
    },
    async put({ key, body, contentType }) {
      const object = name(key);
      const metadata = contentType ? { 'Content-Type': contentType } : {};
      // Bodies up to one part go in a single PUT; longer ones stream as a multipart upload of PART_SIZE parts.
      const read = body instanceof Uint8Array ? { whole: asBuffer(body) } : await readHead(body, PART_SIZE);
      if ('whole' in read) {
        await wrapS3Errors(`put ${key}`, () => client.putObject(bucket, object, read.whole, read.whole.length, metadata));
        return { size: read.whole.length };
      }
      let size = 0;
      const counted = Readable.from(
        (async function* () {
          for await (const chunk of read.stream) {
            size += chunk.length;
            yield chunk;
          }
        })(),
        { objectMode: false },
      );
      await wrapS3Errors(`put ${key}`, () => client.putObject(bucket, object, counted, undefined, metadata));
      return { size };
    },
    async get({ key }) {
      const object = name(key);
      return wrapS3Errors(`get ${key}`, () => ifPresent(() => client.getObject(bucket, object)));
    },
    async stat({ key }) {
      const object = name(key);
      const stat = await wrapS3Errors(`stat ${key}`, () => ifPresent(() => client.statObject(bucket, object)));
      return stat ? { size: stat.size } : null;
    },
    async move({ from, to }) {
      const source = name(from);
      const target = name(to);
      return wrapS3Errors(`move ${from} to ${to}`, async () => {
        const copied = await ifPresent(() => client.copyObject(bucket, target, `/${bucket}/${source}`));
        if (copied === null) return false;
        await client.removeObject(bucket, source);
        return true;
      });
    },
    async delete({ keys }) {
      const objects = keys.map(name);
      if (objects.length === 0) return;
      await wrapS3Errors('delete', async () => {
        const results = await client.removeObjects(bucket, objects);
        const failed = results.filter((result) => result?.Error && !MISSING.has(result.Error.Code ?? ''));
        if (failed.length > 0) {
          const first = failed[0]?.Error;
          throw new S3AdapterError(`S3 delete failed for ${failed.length} object(s), e.g. ${first?.Key}: ${first?.Code}`, {
            cause: failed,
            code: first?.Code,
          });
        }
      });
    },
  };
}
