import { AgentInfraError } from './errors.js';
import { nodeBuiltin } from './node-builtin.js';

/** Bytes to upload: in memory, a web stream, a Node stream (any async iterable of bytes) or a file path. */
export type UploadData = Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | string;

/** The bytes of an upload once the local checks passed: read them once, or release them unread. */
export interface UploadSource {
  /** The bytes in order; reading them throws `invalid_request` as soon as they turn out longer or shorter than `size`. */
  chunks: AsyncIterable<Uint8Array>;
  /** Size in bytes, as /register declares it and the PUT's `content-length` states it. */
  size: number;
  /** Frees what the source opened (a file), read or not; safe to call more than once. */
  release(): Promise<void>;
}

/**
 * The error for bad local input: status 0 (no request was made for it), code
 * `invalid_request`, and `details.fields` = `[{ path, message }]` as a
 * server 400 has them.
 * @param field the upload input's field at fault: `data` or `size`.
 */
export function localInputError(field: 'data' | 'size', message: string, cause?: unknown): AgentInfraError {
  return new AgentInfraError({ status: 0, code: 'invalid_request', message, details: { fields: [{ path: field, message }] }, cause });
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

async function* counted(chunks: AsyncIterable<Uint8Array>, size: number): AsyncIterable<Uint8Array> {
  let read = 0;
  for await (const part of chunks) {
    const chunk = part instanceof Uint8Array ? part : new Uint8Array(part);
    read += chunk.byteLength;
    if (read > size) throw localInputError('size', `data holds more than the ${size} bytes stated in size.`);
    yield chunk;
  }
  if (read < size) throw localInputError('size', `data holds ${read} bytes, not the ${size} stated in size.`);
}

function sizeMismatch(stated: number, actual: number): AgentInfraError {
  return localInputError('size', `size is ${stated} but data holds ${actual} bytes; leave size out to use the data's own length.`);
}

async function openFile(path: string, statedSize: number | undefined): Promise<UploadSource> {
  const fs = await nodeBuiltin<typeof import('node:fs')>('fs');
  const unreadable = (error: unknown) => {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String((error as Error).message ?? error);
    return localInputError('data', `Cannot upload ${path}: ${reason}.`, error);
  };
  const stats = await fs.promises.stat(path).catch((error: unknown) => {
    throw unreadable(error);
  });
  if (!stats.isFile()) throw localInputError('data', `Cannot upload ${path}: not a regular file.`);
  if (statedSize !== undefined && statedSize !== stats.size) throw sizeMismatch(statedSize, stats.size);
  const handle = await fs.promises.open(path, 'r').catch((error: unknown) => {
    throw unreadable(error);
  });
  return { chunks: counted(handle.createReadStream(), stats.size), size: stats.size, release: () => handle.close() };
}

/**
 * Checks an upload's bytes before anything is registered on the server: a
 * file path must name a readable regular file, and a stated `size` must
 * equal the length of a file or of in-memory bytes (a stream's length is
 * only known once read, so it is checked while it is read).
 * @param data the upload's bytes; a string is a file path (Node only).
 * @param statedSize the caller's `size` in bytes; required for streams.
 * @throws AgentInfraError status 0, `invalid_request` (`details.fields` names `data` or `size`) when the input is bad.
 */
export async function openUploadSource(data: UploadData, statedSize: number | undefined): Promise<UploadSource> {
  if (typeof data === 'string') return openFile(data, statedSize);
  if (data instanceof Uint8Array && statedSize !== undefined && statedSize !== data.byteLength)
    throw sizeMismatch(statedSize, data.byteLength);
  const size = statedSize ?? (data instanceof Uint8Array ? data.byteLength : undefined);
  if (size === undefined) throw localInputError('size', 'Uploading a stream needs its size in bytes (size).');
  return { chunks: counted(chunksOf(data), size), size, release: async () => {} };
}
