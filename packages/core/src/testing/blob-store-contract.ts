import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobStore } from '../ports/blob-store.js';

/** What a store can do beyond the common contract; tests of other abilities are skipped. */
export interface BlobStoreCapabilities {
  /**
   * Upload URLs refuse a body of any size but the announced one: fs with 413 (longer) or 400
   * (shorter), S3 with 403 (its presigned PUTs sign `content-length`).
   */
  enforcesUploadSize: boolean;
  /**
   * Download URLs can carry a non-ASCII filename (`filename*=UTF-8''…`, RFC 8187). True for the
   * fs adapter, AWS S3 and MinIO; false only against test servers that mis-sign the `'` it holds
   * (s3rver canonicalises query values with `encodeURIComponent`, unlike SigV4). Default true.
   */
  unicodeFilenames?: boolean;
}

/** Options of {@link runBlobStoreContract}. */
export interface BlobStoreContractOptions {
  /** Name of the implementation, shown in the test titles. */
  name: string;
  /** The store to test, made once for the suite; its `close()`, if any, runs after the last test. */
  create: () => BlobStore | Promise<BlobStore>;
  capabilities: BlobStoreCapabilities;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * The behaviour every {@link BlobStore} guarantees (vitest `describe`/`it`):
 * server-side put/get/stat/move/delete (streamed bodies, overwrite, missing
 * keys), key validation (RangeError), and the signed URLs as a client uses
 * them with `fetch`: PUT then GET with Content-Type, Content-Disposition and
 * Range, bytes served as stored even when the upload declared a
 * `Content-Encoding`, 404 for a missing object, 403 for tampered, expired or
 * wrong-method URLs, and (capability `enforcesUploadSize`) refusal of a body
 * of the wrong size. Keys are fresh per test under a random prefix; the
 * expiry test sleeps about 2.2 s.
 */
export function runBlobStoreContract(options: BlobStoreContractOptions): void {
  const prefix = `contract-${randomUUID()}`;
  const key = (label: string) => `${prefix}/${label}-${randomUUID()}`;
  let store: BlobStore;

  describe(`BlobStore contract: ${options.name}`, () => {
    beforeAll(async () => {
      store = await options.create();
    });
    afterAll(async () => {
      await store?.close?.();
    });

    it('stores bytes and reads them back, with stat giving the size', async () => {
      const name = key('roundtrip');
      const bytes = randomBytes(10_000);
      expect(await store.put({ key: name, body: bytes, contentType: 'application/octet-stream' })).toEqual({ size: 10_000 });
      expect(await store.stat({ key: name })).toEqual({ size: 10_000 });
      const stream = await store.get({ key: name });
      expect(stream).not.toBeNull();
      expect((await readAll(stream as Readable)).equals(bytes)).toBe(true);
    });

    it('streams a multi-megabyte body in and out', async () => {
      const name = key('stream');
      const chunks = Array.from({ length: 48 }, () => randomBytes(65_536));
      const expected = sha256(Buffer.concat(chunks));
      const stat = await store.put({ key: name, body: Readable.from(chunks) });
      expect(stat.size).toBe(48 * 65_536);
      const hash = createHash('sha256');
      for await (const chunk of (await store.get({ key: name })) as Readable) hash.update(chunk as Buffer);
      expect(hash.digest('hex')).toBe(expected);
    });

    it('replaces an object whole on a second put, and accepts an empty one', async () => {
      const name = key('overwrite');
      await store.put({ key: name, body: randomBytes(5_000) });
      const second = Buffer.from('short');
      await store.put({ key: name, body: second });
      expect(await store.stat({ key: name })).toEqual({ size: 5 });
      expect((await readAll((await store.get({ key: name })) as Readable)).toString()).toBe('short');
      const empty = key('empty');
      expect(await store.put({ key: empty, body: new Uint8Array(0) })).toEqual({ size: 0 });
      expect(await store.stat({ key: empty })).toEqual({ size: 0 });
    });

    it('answers null for missing objects and ignores them on delete', async () => {
      const name = key('missing');
      expect(await store.get({ key: name })).toBeNull();
      expect(await store.stat({ key: name })).toBeNull();
      await expect(store.delete({ keys: [name, key('missing-too')] })).resolves.toBeUndefined();
      await expect(store.delete({ keys: [] })).resolves.toBeUndefined();
    });

    it('deletes several objects at once', async () => {
      const names = [key('d1'), key('d2'), key('d3')];
      for (const name of names) await store.put({ key: name, body: Buffer.from(name) });
      await store.delete({ keys: names.slice(0, 2) });
      expect(await store.stat({ key: names[0] as string })).toBeNull();
      expect(await store.stat({ key: names[1] as string })).toBeNull();
      expect(await store.stat({ key: names[2] as string })).toEqual({ size: Buffer.byteLength(names[2] as string) });
    });

    it('moves an object, replacing the target, and reports a missing source', async () => {
      const from = key('move-from');
      const to = key('move-to');
      const bytes = randomBytes(3_000);
      await store.put({ key: from, body: bytes });
      await store.put({ key: to, body: Buffer.from('old') });
      expect(await store.move({ from, to })).toBe(true);
      expect(await store.stat({ key: from })).toBeNull();
      expect((await readAll((await store.get({ key: to })) as Readable)).equals(bytes)).toBe(true);
      expect(await store.move({ from, to: key('never') })).toBe(false);
      expect(await store.stat({ key: to })).toEqual({ size: 3_000 });
    });

    it('keeps keys with spaces, unicode and URL syntax apart and intact', async () => {
      const names = [
        `${prefix}/with space/ü ñ 文件.txt`,
        `${prefix}/q?a=1&b=2#frag`,
        `${prefix}/plus+percent%20x`,
        `${prefix}/a`,
        `${prefix}/a/b`,
      ];
      for (const name of names) await store.put({ key: name, body: Buffer.from(`body of ${name}`) });
      for (const name of names) {
        expect((await readAll((await store.get({ key: name })) as Readable)).toString()).toBe(`body of ${name}`);
        const signed = await store.createDownloadUrl({ key: name, expiresInSeconds: 60 });
        const response = await fetch(signed.url);
        expect(response.status, name).toBe(200);
        expect(await response.text()).toBe(`body of ${name}`);
      }
    });

    it('refuses malformed keys with RangeError', async () => {
      const bad = ['', '/abs', 'a//b', '../x', 'a/../b', 'a/./b', 'a/..', 'a/', 'a\\b', 'nul\u0000byte', 'line\nbreak', 'x'.repeat(1025)];
      for (const name of bad) {
        await expect(store.put({ key: name, body: Buffer.from('x') }), JSON.stringify(name)).rejects.toBeInstanceOf(RangeError);
        await expect(store.stat({ key: name }), JSON.stringify(name)).rejects.toBeInstanceOf(RangeError);
        await expect(
          store.createUploadUrl({ key: name, size: 1, contentType: 'text/plain', expiresInSeconds: 60 }),
          JSON.stringify(name),
        ).rejects.toBeInstanceOf(RangeError);
      }
      // 1024 bytes exactly, in segments of at most 220 bytes (file-backed stores such as MinIO limit segments to 255).
      const longest = `${'é'.repeat(100)}/`.repeat(4) + 'é'.repeat(110);
      expect(Buffer.byteLength(longest)).toBe(1024);
      await expect(store.put({ key: longest, body: Buffer.from('x') })).resolves.toEqual({ size: 1 });
      await store.delete({ keys: [longest] });
    });

    it('accepts a PUT of the announced bytes on an upload URL, served back by a download URL', async () => {
      const name = key('signed');
      const bytes = randomBytes(20_000);
      const before = Date.now();
      const upload = await store.createUploadUrl({ key: name, size: bytes.length, contentType: 'image/png', expiresInSeconds: 120 });
      expect(upload.expiresAt).toBeGreaterThanOrEqual(before + 118_000);
      expect(upload.expiresAt).toBeLessThanOrEqual(Date.now() + 122_000);
      const put = await fetch(upload.url, { method: 'PUT', body: bytes, headers: { 'content-type': 'image/png', ...upload.headers } });
      expect(put.status).toBe(200);
      expect(await store.stat({ key: name })).toEqual({ size: bytes.length });

      const download = await store.createDownloadUrl({
        key: name,
        expiresInSeconds: 60,
        contentType: 'image/png',
        filename: 'chart "v2".png',
      });
      const got = await fetch(download.url, { headers: download.headers });
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe('image/png');
      expect(got.headers.get('content-disposition')).toMatch(/^attachment; filename="chart \\"v2\\"\.png"$/);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    });

    it.runIf(options.capabilities.unicodeFilenames ?? true)('names non-ASCII download filenames with filename*', async () => {
      const name = key('unicode-filename');
      await store.put({ key: name, body: Buffer.from('cv') });
      const unicode = await store.createDownloadUrl({ key: name, expiresInSeconds: 60, filename: 'résumé (final).png' });
      const response = await fetch(unicode.url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-disposition')).toContain("filename*=UTF-8''r%C3%A9sum%C3%A9%20%28final%29.png");
      expect(await response.text()).toBe('cv');
    });

    it('serves single byte ranges from a download URL', async () => {
      const name = key('range');
      const bytes = randomBytes(1_000);
      await store.put({ key: name, body: bytes });
      const { url } = await store.createDownloadUrl({ key: name, expiresInSeconds: 60, contentType: 'application/octet-stream' });
      const middle = await fetch(url, { headers: { range: 'bytes=100-199' } });
      expect(middle.status).toBe(206);
      expect(middle.headers.get('content-range')).toBe('bytes 100-199/1000');
      expect(Buffer.from(await middle.arrayBuffer()).equals(bytes.subarray(100, 200))).toBe(true);
      const open = await fetch(url, { headers: { range: 'bytes=990-' } });
      expect(open.status).toBe(206);
      expect(Buffer.from(await open.arrayBuffer()).equals(bytes.subarray(990))).toBe(true);
      const outside = await fetch(url, { headers: { range: 'bytes=5000-6000' } });
      expect(outside.status).toBe(416);
      await outside.arrayBuffer();
    });

    it('serves the bytes as uploaded when the upload declared Content-Encoding: gzip, before and after a move', async () => {
      const name = key('gzip-upload');
      const gzipped = gzipSync(Buffer.alloc(200_000, 'A'));
      const upload = await store.createUploadUrl({ key: name, size: gzipped.length, contentType: 'text/plain', expiresInSeconds: 60 });
      const put = await fetch(upload.url, {
        method: 'PUT',
        body: gzipped,
        headers: { ...upload.headers, 'content-type': 'text/plain', 'content-encoding': 'gzip' },
      });
      expect(put.status).toBe(200);
      const moved = key('gzip-moved');
      const before = await store.createDownloadUrl({ key: name, expiresInSeconds: 60, contentType: 'text/plain', filename: 'a.txt' });
      const served = [await fetch(before.url)];
      expect(await store.move({ from: name, to: moved })).toBe(true);
      const after = await store.createDownloadUrl({ key: moved, expiresInSeconds: 60, contentType: 'text/plain', filename: 'a.txt' });
      served.push(await fetch(after.url));
      for (const response of served) {
        expect(response.status).toBe(200);
        // fetch inflates gzip, deflate and br bodies; anything else (`identity`, or no header) reaches it as sent.
        expect(response.headers.get('content-encoding') ?? 'identity').toBe('identity');
        expect(Buffer.from(await response.arrayBuffer()).equals(gzipped)).toBe(true);
      }
      expect(await store.stat({ key: moved })).toEqual({ size: gzipped.length });
    });

    it('answers 404 on a download URL whose object does not exist', async () => {
      const { url } = await store.createDownloadUrl({ key: key('absent'), expiresInSeconds: 60 });
      const response = await fetch(url);
      expect(response.status).toBe(404);
      await response.arrayBuffer();
    });

    it('refuses tampered URLs and URLs used with another method with 403', async () => {
      const name = key('tamper');
      const bytes = Buffer.from('original');
      await store.put({ key: name, body: bytes });
      const download = await store.createDownloadUrl({ key: name, expiresInSeconds: 60 });
      const other = key('tamper-other');
      await store.put({ key: other, body: Buffer.from('other') });

      const url = new URL(download.url);
      const signatureParam = [...url.searchParams.keys()].find((param) => /signature/i.test(param)) as string;
      expect(signatureParam).toBeDefined();
      const flipped = new URL(url);
      const signature = flipped.searchParams.get(signatureParam) as string;
      flipped.searchParams.set(signatureParam, (signature[0] === 'a' ? 'b' : 'a') + signature.slice(1));
      const otherObject = new URL(url);
      otherObject.pathname = url.pathname.replace(/[^/]+$/, encodeURIComponent(other.split('/').pop() as string));
      for (const tampered of [flipped, otherObject]) {
        const response = await fetch(tampered);
        expect(response.status, tampered.toString()).toBe(403);
        await response.arrayBuffer();
      }

      const putOnDownload = await fetch(download.url, { method: 'PUT', body: Buffer.from('evil!!!!') });
      expect(putOnDownload.status).toBe(403);
      await putOnDownload.arrayBuffer();
      const upload = await store.createUploadUrl({ key: name, size: 4, contentType: 'text/plain', expiresInSeconds: 60 });
      const getOnUpload = await fetch(upload.url);
      expect(getOnUpload.status).toBe(403);
      await getOnUpload.arrayBuffer();
      expect((await readAll((await store.get({ key: name })) as Readable)).equals(bytes)).toBe(true);
    });

    it('refuses upload and download URLs once they expire', async () => {
      const name = key('expiry');
      await store.put({ key: name, body: Buffer.from('kept') });
      const upload = await store.createUploadUrl({ key: name, size: 3, contentType: 'text/plain', expiresInSeconds: 1 });
      const download = await store.createDownloadUrl({ key: name, expiresInSeconds: 1 });
      await sleep(2_200);
      const put = await fetch(upload.url, { method: 'PUT', body: Buffer.from('new') });
      expect(put.status).toBe(403);
      await put.arrayBuffer();
      const get = await fetch(download.url);
      expect(get.status).toBe(403);
      await get.arrayBuffer();
      expect((await readAll((await store.get({ key: name })) as Readable)).toString()).toBe('kept');
    });

    it.runIf(options.capabilities.enforcesUploadSize)(
      'refuses an upload of any size but the announced one and stores nothing',
      async () => {
        const name = key('size');
        const upload = await store.createUploadUrl({ key: name, size: 100, contentType: 'text/plain', expiresInSeconds: 60 });
        const tooBig = await fetch(upload.url, { method: 'PUT', body: randomBytes(101) });
        expect([403, 413]).toContain(tooBig.status);
        await tooBig.arrayBuffer();
        const tooSmall = await fetch(upload.url, { method: 'PUT', body: randomBytes(99) });
        expect([400, 403]).toContain(tooSmall.status);
        await tooSmall.arrayBuffer();
        expect(await store.stat({ key: name })).toBeNull();
        const streamedTooBig = await fetch(upload.url, {
          method: 'PUT',
          body: Readable.toWeb(Readable.from([randomBytes(60), randomBytes(60)])) as ReadableStream,
          duplex: 'half',
        } as RequestInit);
        // Chunked, without Content-Length: S3 itself answers 411 (MissingContentLength) or 403.
        expect([403, 411, 413]).toContain(streamedTooBig.status);
        await streamedTooBig.arrayBuffer();
        expect(await store.stat({ key: name })).toBeNull();
      },
    );
  });
}
