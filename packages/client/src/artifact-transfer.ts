import { callSignal, untilAborted } from './call-signal.js';
import { errorOfResponse } from './errors.js';
import type { Routes } from './generated/routes.js';
import { nodeBuiltin } from './node-builtin.js';
import type { CallOptions, TransportOptions } from './transport.js';
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
 * then /commit with that hash. The bytes are read once and never held whole;
 * a stream's string chunks are sent as their UTF-8 bytes.
 * Node only (uses `node:crypto`, and `node:fs` for a file path, loaded when
 * it runs, so the rest of the client bundles for browsers).
 * @returns /commit's answer: artifact_id, status `committed`, size, sha256.
 * @throws AgentInfraError status 0 `invalid_request` outside Node, for a missing, unreadable or non-regular file, a `size`
 *   that does not match the data (a stream's only once read: after /register, unless its first chunk is already longer),
 *   a stream without `size`, or a stream chunk that is neither bytes nor a string (the first is read before /register, so
 *   a stream of such chunks registers nothing; a later one fails the PUT); from the routes;
 *   from the PUT (e.g. 413); `timeout` when the PUT makes no progress for `timeoutMs` (the call's, else the client's:
 *   restarted each time the PUT takes the next chunk, and running until its response headers arrive); `aborted` (the
 *   call's signal); `network_error` when the PUT does not complete. The PUT is never retried: the stream is read once.
 */
export async function uploadArtifact(
  routes: ArtifactRoutes,
  transport: Pick<TransportOptions, 'fetch' | 'timeoutMs'>,
  input: UploadInput,
  options: CallOptions = {},
): Promise<Routes['agent-artifacts/commit']['response']> {
  const { createHash } = await nodeBuiltin<typeof import('node:crypto')>('crypto');
  const source = await openUploadSource(input.data, input.size);
  const deadline = callSignal(options.signal, options.timeoutMs ?? transport.timeoutMs);
  const iterator = source.chunks[Symbol.asyncIterator]();
  // Not awaited: a generator finishes return() only once its pending next() settles, which a stalled source never does.
  const stopSource = () => void iterator.return?.()?.catch(() => undefined);
  let sourceError: unknown;
  /** The source's next chunk, unless the deadline fires first; a failure of the source is kept to be reported as it is. */
  const next = () =>
    untilAborted(iterator.next(), deadline.signal).catch((error: unknown) => {
      if (!deadline.signal.aborted) sourceError = error;
      throw error;
    });
  const giveUp = async (error: unknown) => {
    stopSource();
    deadline.dispose();
    await source.release();
    throw error;
  };
  // The first chunk is read before /register: a stream whose chunks are not bytes, or whose first is already
  // longer than `size`, registers nothing.
  let first: IteratorResult<Uint8Array> | undefined = await next().catch((error: unknown) =>
    giveUp(deadline.failure(sourceError ?? error, `Upload of ${input.key}`)),
  );
  deadline.stop();
  const registered = await routes
    .register({ agent_id: input.agent_id, key: input.key, mime: input.mime, size: source.size, ttl_days: input.ttl_days }, options)
    .catch(giveUp);
  const hash = createHash('sha256');
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      deadline.restart();
      const chunk = first ?? (await next());
      first = undefined;
      if (chunk.done) {
        controller.close();
        return;
      }
      hash.update(chunk.value);
      controller.enqueue(chunk.value);
    },
    cancel() {
      stopSource();
    },
  });
  deadline.restart();
  try {
    const response = await transport.fetch(registered.upload_url, {
      method: 'PUT',
      headers: { ...registered.upload_headers, 'content-length': String(source.size) },
      body,
      duplex: 'half',
      signal: deadline.signal,
    } as RequestInit);
    if (!response.ok) throw await errorOfResponse(response);
    await response.body?.cancel();
  } catch (error) {
    stopSource();
    throw deadline.failure(sourceError ?? error, `Upload of ${input.key}`);
  } finally {
    deadline.dispose();
    await source.release();
  }
  return routes.commit({ artifact_id: registered.artifact_id, sha256: hash.digest('hex') }, options);
}
