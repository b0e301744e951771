import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBlobStoreContract } from '@agentinfra/core/testing';
import { getRequestListener } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsBlobStore, type FsBlobStore } from './index.js';

const SIGNING_KEY = randomBytes(32);

/** An fs store in a fresh temp folder, served by a real HTTP server on 127.0.0.1 port 0. */
async function startFsStore(options: { now?: () => number } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'agentinfra-fs-'));
  let base = '';
  const fs: FsBlobStore = createFsBlobStore({
    dir,
    publicUrl: () => base,
    signingKey: SIGNING_KEY,
    durable: false,
    ...(options.now ? { clock: { now: options.now } } : {}),
  });
  const server: Server = createServer(getRequestListener((request, env) => fs.mount.fetch(request, env.incoming)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    ...fs,
    dir,
    base: () => base,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

type Started = Awaited<ReturnType<typeof startFsStore>>;

let contractServer: Started;
runBlobStoreContract({
  name: 'fs',
  create: async () => {
    contractServer = await startFsStore();
    return { ...contractServer.store, close: () => contractServer.stop() };
  },
  capabilities: { enforcesUploadSize: true },
});

/** Sends one raw HTTP request (no client-side normalisation of the path). */
function rawRequest(base: string, options: { method: string; path: string; headers?: Record<string, string>; body?: Buffer }) {
  const { hostname, port } = new URL(base);
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const req = httpRequest({ hostname, port, method: options.method, path: options.path, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('fs blob store specifics', () => {
  let fs: Started;
  let now = Date.now();
  beforeAll(async () => {
    fs = await startFsStore({ now: () => now });
  });
  afterAll(async () => {
    await fs?.stop();
  });

  const tempFiles = async () => readdir(join(fs.dir, 'tmp'));

  it('keeps objects under hashed names inside the folder, whatever the key', async () => {
    await fs.store.put({ key: 'reports/2026/q1.txt', body: Buffer.from('hello') });
    const shards = await readdir(join(fs.dir, 'objects'));
    expect(shards.every((name) => /^[0-9a-f]{2}$/.test(name))).toBe(true);
    const files = (await Promise.all(shards.map((shard) => readdir(join(fs.dir, 'objects', shard))))).flat();
    expect(files.every((name) => /^[0-9a-f]{64}$/.test(name))).toBe(true);
    expect(fs.store.describe()).toBe(`fs (${fs.dir})`);
  });

  it('refuses traversal and malformed object paths at the mount (400 before any signature check, else 403/404)', async () => {
    const { url } = await fs.store.createDownloadUrl({ key: 'reports/2026/q1.txt', expiresInSeconds: 60 });
    const query = new URL(url).search;
    for (const path of ['..%2f..%2fetc%2fpasswd', '%2e%2e%2fsecret', 'a%5cb', '%00', 'bad%zzpercent', 'a//b']) {
      const response = await rawRequest(fs.base(), { method: 'GET', path: `/storage/v1/object/${path}${query}` });
      expect(response.status, path).toBe(400);
      expect(JSON.parse(response.body).error.code).toBe('invalid_request');
    }
    // URL parsing resolves dot segments (also %2e%2e): what is left names another key, whose signature fails, or no mount.
    const resolved = await rawRequest(fs.base(), { method: 'GET', path: `/storage/v1/object/reports/%2E%2E/2026/q1.txt${query}` });
    expect(resolved.status).toBe(403);
    const outside = await rawRequest(fs.base(), { method: 'GET', path: `/storage/v1/object/%2e%2e/%2e%2e/x${query}` });
    expect(outside.status).toBe(404);
    const signatureOnly = await rawRequest(fs.base(), {
      method: 'GET',
      path: `/storage/v1/object/reports/2026/q1.txt?expires=${now + 60_000}`,
    });
    expect(signatureOnly.status).toBe(403);
    expect(JSON.parse(signatureOnly.body).error.code).toBe('forbidden');
  });

  it('binds the content type and filename into the signature', async () => {
    const { url } = await fs.store.createDownloadUrl({
      key: 'reports/2026/q1.txt',
      expiresInSeconds: 60,
      contentType: 'text/plain',
      filename: 'q1.txt',
    });
    const html = new URL(url);
    html.searchParams.set('type', 'text/html');
    expect((await fetch(html)).status).toBe(403);
    const renamed = new URL(url);
    renamed.searchParams.set('filename', 'q1.html');
    expect((await fetch(renamed)).status).toBe(403);
    const dropped = new URL(url);
    dropped.searchParams.delete('filename');
    expect((await fetch(dropped)).status).toBe(403);
    const good = await fetch(url);
    expect(good.status).toBe(200);
    expect(good.headers.get('x-content-type-options')).toBe('nosniff');
    expect(good.headers.get('content-security-policy')).toContain('sandbox');
    expect(await good.text()).toBe('hello');
  });

  it('serves an object whose stored media type is no valid header value as application/octet-stream, not a 500', async () => {
    for (const contentType of ['text/plain; a="\u0101"', 'text/plain; a="\u0001"']) {
      const { url } = await fs.store.createDownloadUrl({ key: 'reports/2026/q1.txt', expiresInSeconds: 60, contentType });
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/octet-stream');
      expect(await response.text()).toBe('hello');
    }
  });

  it('expires URLs by the injected clock, to the millisecond', async () => {
    const upload = await fs.store.createUploadUrl({ key: 'clocked', size: 2, contentType: 'text/plain', expiresInSeconds: 10 });
    now += 9_999;
    expect((await fetch(upload.url, { method: 'PUT', body: 'ok' })).status).toBe(200);
    now += 1;
    const late = await fetch(upload.url, { method: 'PUT', body: 'no' });
    expect(late.status).toBe(403);
    expect(((await late.json()) as { error: { message: string } }).error.message).toMatch(/expired/);
  });

  it('answers HEAD with the headers only, and 405 to other methods', async () => {
    await fs.store.put({ key: 'head/me', body: randomBytes(321) });
    const { url } = await fs.store.createDownloadUrl({ key: 'head/me', expiresInSeconds: 60 });
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('321');
    expect(head.headers.get('content-type')).toBe('application/octet-stream');
    const post = await fetch(url, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, PUT');
    const preflight = await fetch(url, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('PUT');
  });

  it('serves a suffix range, and the whole object for several ranges or an If-Range', async () => {
    const bytes = randomBytes(100);
    await fs.store.put({ key: 'ranges', body: bytes });
    const { url } = await fs.store.createDownloadUrl({ key: 'ranges', expiresInSeconds: 60 });
    const suffix = await fetch(url, { headers: { range: 'bytes=-10' } });
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get('content-range')).toBe('bytes 90-99/100');
    expect(Buffer.from(await suffix.arrayBuffer()).equals(bytes.subarray(90))).toBe(true);
    const several = await fetch(url, { headers: { range: 'bytes=0-1,50-60' } });
    expect(several.status).toBe(200);
    expect((await several.arrayBuffer()).byteLength).toBe(100);
    const conditional = await fetch(url, { headers: { range: 'bytes=0-1', 'if-range': '"etag"' } });
    expect(conditional.status).toBe(200);
    await conditional.arrayBuffer();
    const malformed = await fetch(url, { headers: { range: 'lines=1-2' } });
    expect(malformed.status).toBe(200);
    await malformed.arrayBuffer();
  });

  it('answers a range outside the object with 416, the JSON error body and Content-Range', async () => {
    await fs.store.put({ key: 'short', body: Buffer.from('hello') });
    const { url } = await fs.store.createDownloadUrl({ key: 'short', expiresInSeconds: 60, contentType: 'text/markdown' });
    const response = await fetch(url, { headers: { range: 'bytes=10-20' } });
    expect(response.status).toBe(416);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('content-range')).toBe('bytes */5');
    expect(await response.json()).toEqual({
      error: { code: 'range_not_satisfiable', message: 'The requested range is outside the object of 5 bytes.' },
    });
  });

  it('leaves no object and no temp file when a client aborts an upload half-way', async () => {
    const upload = await fs.store.createUploadUrl({
      key: 'aborted',
      size: 4_000_000,
      contentType: 'application/octet-stream',
      expiresInSeconds: 60,
    });
    const { hostname, port, pathname, search } = new URL(upload.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({ hostname, port, method: 'PUT', path: pathname + search, headers: { 'content-length': '4000000' } });
      req.on('error', () => resolve());
      req.write(randomBytes(1_000_000), () => {
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 100);
      });
    });
    // The server notices the disconnect and removes its temporary file in its own time.
    await expect.poll(() => tempFiles()).toEqual([]);
    expect(await fs.store.stat({ key: 'aborted' })).toBeNull();
  });

  it('replaces an object only once the new upload is complete', async () => {
    const key = 'atomic';
    await fs.store.put({ key, body: Buffer.from('version one') });
    const upload = await fs.store.createUploadUrl({ key, size: 11, contentType: 'text/plain', expiresInSeconds: 60 });
    const short = await fetch(upload.url, { method: 'PUT', body: 'version' });
    expect(short.status).toBe(400);
    expect(await readFile(objectFile(fs.dir, key), 'utf8')).toBe('version one');
    expect((await fetch(upload.url, { method: 'PUT', body: 'version two' })).status).toBe(200);
    const stream = await fs.store.get({ key });
    let text = '';
    for await (const chunk of stream ?? []) text += chunk;
    expect(text).toBe('version two');
    expect(await tempFiles()).toEqual([]);
  });

  it('validates its options', () => {
    expect(() => createFsBlobStore({ dir: fs.dir, publicUrl: 'not a url', signingKey: SIGNING_KEY })).toThrow();
    expect(() => createFsBlobStore({ dir: fs.dir, publicUrl: 'http://x', signingKey: 'short' })).toThrow(/32/);
    expect(() => createFsBlobStore({ dir: fs.dir, publicUrl: 'http://x', signingKey: SIGNING_KEY, basePath: 'no-slash' })).toThrow();
    const store = createFsBlobStore({ dir: fs.dir, publicUrl: 'http://x/', signingKey: SIGNING_KEY }).store;
    return expect(store.createUploadUrl({ key: 'k', size: 1, contentType: 'x/y', expiresInSeconds: 0 })).rejects.toBeInstanceOf(RangeError);
  });
});

/** The file that holds `key` (the store's documented layout). */
function objectFile(dir: string, key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  return join(dir, 'objects', hex.slice(0, 2), hex);
}
