import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import S3rver from '@20minutes/s3rver';
import { runBlobStoreContract } from '@agentinfra/core/testing';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Client } from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3BlobStore, S3AdapterError, type S3BlobStoreOptions } from './index.js';

/** s3rver's built-in account: it checks SigV4 signatures against this pair. */
const ACCESS_KEY = 'S3RVER';
const SECRET_KEY = 'S3RVER';
const BUCKET = 'agentinfra-test';

/** A real S3-API server (signatures checked) on 127.0.0.1 port 0, with one bucket. */
async function startS3rver() {
  const directory = await mkdtemp(join(tmpdir(), 'agentinfra-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: BUCKET }] });
  const { port } = (await server.run()) as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

let s3: Awaited<ReturnType<typeof startS3rver>>;
const options = (extra: Partial<S3BlobStoreOptions> = {}): S3BlobStoreOptions => ({
  url: s3.url,
  bucket: BUCKET,
  accessKey: ACCESS_KEY,
  secretKey: SECRET_KEY,
  ...extra,
});

beforeAll(async () => {
  s3 = await startS3rver();
});
afterAll(async () => {
  await s3?.stop();
});

runBlobStoreContract({
  name: 's3 (s3rver)',
  create: () => createS3BlobStore(options()),
  capabilities: { enforcesUploadSize: true, unicodeFilenames: false },
});

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('s3 blob store specifics', () => {
  const sdk = () =>
    new S3Client({
      endpoint: s3.url,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
    });

  it('refuses a wrong secret at start, without putting it in the message', async () => {
    const attempt = createS3BlobStore(options({ secretKey: 'not-the-secret-123' }));
    await expect(attempt).rejects.toBeInstanceOf(S3AdapterError);
    const error = (await attempt.catch((caught: unknown) => caught)) as S3AdapterError;
    // The bucket check is a HEAD request: S3 answers 403 without a body, so the code is AccessDenied.
    expect(['SignatureDoesNotMatch', 'AccessDenied']).toContain(error.code);
    expect(error.message).not.toContain('not-the-secret-123');
    expect(error.cause).toBeDefined();
  });

  it('refuses a missing bucket unless createBucket is set, then creates it', async () => {
    const bucket = `made-${randomUUID().slice(0, 8)}`;
    const refused = await createS3BlobStore(options({ bucket })).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(S3AdapterError);
    expect((refused as S3AdapterError).code).toBe('NoSuchBucket');
    const store = await createS3BlobStore(options({ bucket, createBucket: true }));
    await store.put({ key: 'x', body: Buffer.from('y') });
    expect(await store.stat({ key: 'x' })).toEqual({ size: 1 });
    await expect(createS3BlobStore(options({ bucket, createBucket: true }))).resolves.toBeDefined();
  });

  it('fails with the network error code when the endpoint is unreachable', async () => {
    const error = await createS3BlobStore(options({ url: 'http://127.0.0.1:1' })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(S3AdapterError);
    expect((error as S3AdapterError).code).toBe('ECONNREFUSED');
  });

  it('describes its location without credentials, and keeps keys under the prefix', async () => {
    const store = await createS3BlobStore(options({ prefix: 'agentinfra/' }));
    expect(store.describe()).toBe(`s3 (${s3.url}/${BUCKET}/agentinfra/)`);
    expect(store.describe()).not.toContain(SECRET_KEY.toLowerCase());
    await store.put({ key: 'prefixed/object', body: Buffer.from('in prefix') });
    const head = await sdk().send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'agentinfra/prefixed/object' }));
    expect(head.ContentLength).toBe(9);
  });

  it('hands out presigned URLs that a user’s fetch and the AWS SDK agree with', async () => {
    const store = await createS3BlobStore(options());
    const key = `user/${randomUUID()}/report.csv`;
    const bytes = randomBytes(50_000);
    const upload = await store.createUploadUrl({ key, size: bytes.length, contentType: 'text/csv', expiresInSeconds: 60 });
    expect(new URL(upload.url).searchParams.get('X-Amz-Expires')).toBe('60');
    const put = await fetch(upload.url, { method: 'PUT', body: bytes, headers: { 'content-type': 'text/csv' } });
    expect(put.status).toBe(200);
    const viaSdk = await sdk().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(viaSdk.ContentLength).toBe(bytes.length);
    expect(Buffer.from(await (viaSdk.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray()).equals(bytes)).toBe(
      true,
    );

    const other = `user/${randomUUID()}/from-sdk.bin`;
    await sdk().send(new PutObjectCommand({ Bucket: BUCKET, Key: other, Body: bytes }));
    expect(await store.stat({ key: other })).toEqual({ size: bytes.length });
    expect((await readAll((await store.get({ key: other })) as Readable)).equals(bytes)).toBe(true);
    const download = await store.createDownloadUrl({
      key: other,
      expiresInSeconds: 60,
      contentType: 'application/pdf',
      filename: 'data.pdf',
    });
    const got = await fetch(download.url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    expect(got.headers.get('content-disposition')).toBe('attachment; filename=data.pdf');
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('signs URLs for publicUrl when clients reach S3 at another address', async () => {
    const store = await createS3BlobStore(options({ publicUrl: `http://localhost:${s3.port}` }));
    const key = `public/${randomUUID()}`;
    const upload = await store.createUploadUrl({ key, size: 5, contentType: 'text/plain', expiresInSeconds: 60 });
    expect(new URL(upload.url).host).toBe(`localhost:${s3.port}`);
    expect((await fetch(upload.url, { method: 'PUT', body: 'hello' })).status).toBe(200);
    const download = await store.createDownloadUrl({ key, expiresInSeconds: 60 });
    expect(await (await fetch(download.url)).text()).toBe('hello');
  });

  it('binds upload URLs to the announced length, so S3 refuses any other body before storing it', async () => {
    const store = await createS3BlobStore(options());
    const key = `length/${randomUUID()}`;
    const upload = await store.createUploadUrl({ key, size: 5, contentType: 'text/plain', expiresInSeconds: 60 });
    expect(new URL(upload.url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host');
    expect(upload.headers).toEqual({ 'content-length': '5' });
    // S3 may answer before reading the body, and close the connection while fetch still sends it.
    const big = await fetch(upload.url, { method: 'PUT', body: randomBytes(2 * 1024 * 1024) }).then(
      async (response) => `${response.status} ${await response.text()}`,
      () => 'connection closed',
    );
    expect(big).toMatch(/^(403 .*SignatureDoesNotMatch|connection closed)/s);
    expect(await store.stat({ key })).toBeNull();
    expect((await fetch(upload.url, { method: 'PUT', body: 'hello', headers: upload.headers })).status).toBe(200);
    expect(await store.stat({ key })).toEqual({ size: 5 });
  });

  it('signs upload URLs for keys that need escaping, and with a session token', async () => {
    const store = await createS3BlobStore(options({ sessionToken: 'FwoGZXIvYXdzE+token/with=chars' }));
    const names = ['with space/ü ñ 文件.txt', "it's (1)*!~.txt", 'q?a=1&b=2#frag', 'plus+percent%20x'].map(
      (name) => `escape/${randomUUID()}/${name}`,
    );
    for (const key of names) {
      const upload = await store.createUploadUrl({ key, size: Buffer.byteLength(key), contentType: 'text/plain', expiresInSeconds: 60 });
      expect(new URL(upload.url).searchParams.get('X-Amz-Security-Token')).toBe('FwoGZXIvYXdzE+token/with=chars');
      const put = await fetch(upload.url, { method: 'PUT', body: key });
      expect(put.status, key).toBe(200);
      expect((await readAll((await store.get({ key })) as Readable)).toString()).toBe(key);
    }
  });

  it('serves nothing to URLs presigned with another secret or another access key', async () => {
    const store = await createS3BlobStore(options());
    const key = `forge/${randomUUID()}`;
    await store.put({ key, body: Buffer.from('secret data') });
    const { port } = s3;
    const forger = new Client({
      endPoint: '127.0.0.1',
      port,
      useSSL: false,
      accessKey: ACCESS_KEY,
      secretKey: 'forged-secret',
      region: 'us-east-1',
      pathStyle: true,
    });
    const forgedSecret = await forger.presignedGetObject(BUCKET, key, 60);
    expect((await fetch(forgedSecret)).status).toBe(403);
    const { url } = await store.createDownloadUrl({ key, expiresInSeconds: 60 });
    const otherKey = new URL(url);
    otherKey.searchParams.set('X-Amz-Credential', (otherKey.searchParams.get('X-Amz-Credential') ?? '').replace(ACCESS_KEY, 'SOMEONE'));
    expect((await fetch(otherKey)).status).toBe(403);
    expect(await (await fetch(url)).text()).toBe('secret data');
  });

  it('moves objects whose keys need escaping', async () => {
    const store = await createS3BlobStore(options());
    // Spaces and non-ASCII only: s3rver decodes x-amz-copy-source with decodeURI, which leaves %3F, %26 … encoded.
    const from = `move/${randomUUID()}/a b ü`;
    const to = `move/${randomUUID()}/target`;
    await store.put({ key: from, body: Buffer.from('moved') });
    expect(await store.move({ from, to })).toBe(true);
    expect(await store.stat({ key: from })).toBeNull();
    expect((await readAll((await store.get({ key: to })) as Readable)).toString()).toBe('moved');
  });

  it('validates its options', async () => {
    await expect(createS3BlobStore({ bucket: BUCKET, accessKey: 'a', secretKey: 'b' })).rejects.toThrow(/url or endPoint/);
    await expect(createS3BlobStore(options({ bucket: 'Bad_Bucket' }))).rejects.toThrow(/bucket/);
    await expect(createS3BlobStore(options({ prefix: '/abs/' }))).rejects.toThrow(/prefix|end with/);
  });
});
