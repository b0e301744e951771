import { AgentInfraError, errorOfResponse } from './errors.js';
import type { Routes } from './generated/routes.js';
import type { CallOptions } from './transport.js';

/** Bytes to upload: in memory, a web stream, a Node stream (any async iterable of bytes) or a file path. */
export type UploadData = Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | string;

/** What `artifacts.upload` takes: /register's body with `data` instead of `size` (which it may still state). */
export interface UploadInput {
  agent_id: string;
  /** Path-like name, e.g. `reports/2026-11.md`. */
  key: string;
  /** Media type, e.g. `text/markdown`. */
  mime: string;
  /** The bytes; a string is a file path (Node only). */
  data: UploadData;
  /** Size in bytes: required for streams, read from `data` otherwise. */
  size?: number;
  /** Lifetime in days (1–3650; server default 30). */
  ttl_days?: number;
}

/** The route calls upload needs (the client's own, so retries and timeouts apply). */
export interface ArtifactRoutes {
  register(
    body: Routes['agent-artifacts/register']['request'],
    options?: CallOptions,
  ): Promise<Routes['agent-artifacts/register']['response']>;
  commit(body: Routes['agent-artifacts/commit']['request'], options?: CallOptions): Promise<Routes['agent-artifacts/commit']['response']>;
}

async function* chunksOf(data: Exclude<UploadData, string>): AsyncIterable<Uint8Array> {
  if (data instanceof Uint8Array) {
    yield data;
    return;
  }
  if (Symbol.asyncIterator in data) {
    yield* data as AsyncIterable<Uint8Array>;
    return;
  }
  const reader = (data as ReadableStream<Uint8Array>).getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) yield read.value;
}

/**
 * Loads a Node built-in when the upload runs, through a specifier that is
 * not a literal, so a bundler for browsers neither resolves nor includes it.
 * @throws AgentInfraError (status 0, `invalid_request`) outside Node, before any request is made.
 */
async function nodeBuiltin<T>(name: 'crypto' | 'fs'): Promise<T> {
  if (typeof process === 'undefined' || !process.versions?.node)
    throw new AgentInfraError({
      status: 0,
      code: 'invalid_request',
      message: `artifacts.upload needs Node 20+ (node:${name}); in a browser, call artifacts.register, PUT the bytes to upload_url, then artifacts.commit.`,
    });
  const specifier = `node:${name}`;
  return (await import(specifier)) as T;
}

async function sourceOf(input: UploadInput): Promise<{ chunks: AsyncIterable<Uint8Array>; size: number }> {
  if (typeof input.data === 'string') {
    const fs = await nodeBuiltin<typeof import('node:fs')>('fs');
    const size = input.size ?? (await fs.promises.stat(input.data)).size;
    return { chunks: fs.createReadStream(input.data), size };
  }
  const size = input.size ?? (input.data instanceof Uint8Array ? input.data.byteLength : undefined);
  if (size === undefined)
    throw new AgentInfraError({ status: 0, code: 'invalid_request', message: 'Uploading a stream needs its size in bytes (size).' });
  return { chunks: chunksOf(input.data), size };
}

/**
 * Stores bytes as an artifact: /register, one streaming PUT of `data` to the
 * returned upload URL while computing its SHA-256 (FIPS 180-4, hex), then
 * /commit with that hash. The bytes are read once and never held whole.
 * Node only (uses `node:crypto`, and `node:fs` for a file path, loaded when
 * it runs, so the rest of the client bundles for browsers).
 * @returns /commit's answer: artifact_id, status `committed`, size, sha256.
 * @throws AgentInfraError `invalid_request` outside Node; from the routes, or from the PUT (e.g. 413/400 when `size` is wrong;
 *   `network_error` when it does not complete). The PUT is never retried: the stream is read once.
 */
export async function uploadArtifact(
  routes: ArtifactRoutes,
  fetchImpl: typeof globalThis.fetch,
  input: UploadInput,
  options: CallOptions = {},
): Promise<Routes['agent-artifacts/commit']['response']> {
  const { createHash } = await nodeBuiltin<typeof import('node:crypto')>('crypto');
  const { chunks, size } = await sourceOf(input);
  const registered = await routes.register(
    { agent_id: input.agent_id, key: input.key, mime: input.mime, size, ttl_days: input.ttl_days },
    options,
  );
  const hash = createHash('sha256');
  const iterator = chunks[Symbol.asyncIterator]();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) {
        controller.close();
        return;
      }
      const chunk = next.value instanceof Uint8Array ? next.value : new Uint8Array(next.value);
      hash.update(chunk);
      controller.enqueue(chunk);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  let response: Response;
  try {
    response = await fetchImpl(registered.upload_url, {
      method: 'PUT',
      headers: { ...registered.upload_headers, 'content-length': String(size) },
      body,
      duplex: 'half',
      signal: options.signal,
    } as RequestInit);
  } catch (error) {
    await iterator.return?.();
    throw new AgentInfraError({
      status: 0,
      code: 'network_error',
      message: `Upload of ${input.key} failed: ${String(error)}`,
      cause: error,
    });
  }
  if (!response.ok) throw await errorOfResponse(response);
  await response.body?.cancel();
  return routes.commit({ artifact_id: registered.artifact_id, sha256: hash.digest('hex') }, options);
}

/**
 * Opens a download: the signed URL from `url` (what /fetch or /download
 * returned) as a stream of bytes.
 * @throws AgentInfraError when the blob store refuses (e.g. 403 expired URL, 404).
 */
export async function openDownload(
  fetchImpl: typeof globalThis.fetch,
  url: string,
  options: CallOptions = {},
): Promise<ReadableStream<Uint8Array>> {
  const response = await fetchImpl(url, { signal: options.signal });
  if (!response.ok) throw await errorOfResponse(response);
  if (!response.body)
    throw new AgentInfraError({ status: response.status, code: 'invalid_response', message: 'The download has no body.' });
  return response.body as ReadableStream<Uint8Array>;
}
