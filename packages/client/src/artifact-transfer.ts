import { AgentInfraError, errorOfResponse } from './errors.js';
import type { Routes } from './generated/routes.js';
import { nodeBuiltin } from './node-builtin.js';
import type { CallOptions } from './transport.js';
import { openUploadSource, type UploadData } from './upload-source.js';

export type { UploadData } from './upload-source.js';

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

/**
 * Stores bytes as an artifact: checks the local input (a file path names a
 * readable regular file, a stated `size` matches a file or in-memory bytes)
 * before anything is registered, then /register, one streaming PUT of `data`
 * to the returned upload URL while computing its SHA-256 (FIPS 180-4, hex),
 * then /commit with that hash. The bytes are read once and never held whole.
 * Node only (uses `node:crypto`, and `node:fs` for a file path, loaded when
 * it runs, so the rest of the client bundles for browsers).
 * @returns /commit's answer: artifact_id, status `committed`, size, sha256.
 * @throws AgentInfraError status 0 `invalid_request` outside Node, for a missing, unreadable or non-regular file, a `size`
 *   that does not match the data (a stream's only once read, after /register), or a stream without `size`; from the routes;
 *   from the PUT (e.g. 413); `network_error` when the PUT does not complete. The PUT is never retried: the stream is read once.
 */
export async function uploadArtifact(
  routes: ArtifactRoutes,
  fetchImpl: typeof globalThis.fetch,
  input: UploadInput,
  options: CallOptions = {},
): Promise<Routes['agent-artifacts/commit']['response']> {
  const { createHash } = await nodeBuiltin<typeof import('node:crypto')>('crypto');
  const source = await openUploadSource(input.data, input.size);
  const registered = await routes
    .register({ agent_id: input.agent_id, key: input.key, mime: input.mime, size: source.size, ttl_days: input.ttl_days }, options)
    .catch(async (error: unknown) => {
      await source.release();
      throw error;
    });
  const hash = createHash('sha256');
  const iterator = source.chunks[Symbol.asyncIterator]();
  let sourceError: unknown;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next().catch((error: unknown) => {
        sourceError = error;
        throw error;
      });
      if (next.done) {
        controller.close();
        return;
      }
      hash.update(next.value);
      controller.enqueue(next.value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  let response: Response;
  try {
    response = await fetchImpl(registered.upload_url, {
      method: 'PUT',
      headers: { ...registered.upload_headers, 'content-length': String(source.size) },
      body,
      duplex: 'half',
      signal: options.signal,
    } as RequestInit);
  } catch (error) {
    await iterator.return?.();
    if (sourceError instanceof AgentInfraError) throw sourceError;
    const failure = sourceError ?? error;
    throw new AgentInfraError({
      status: 0,
      code: 'network_error',
      message: `Upload of ${input.key} failed: ${String(failure)}`,
      cause: failure,
    });
  } finally {
    await source.release();
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
