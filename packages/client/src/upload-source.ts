import { AgentInfraError } from './errors.js';
import { nodeBuiltin } from './node-builtin.js';

/** A chunk of a stream to upload: bytes, or a string (sent as its UTF-8 bytes). */
export type UploadChunk = Uint8Array | ArrayBuffer | string;

/**
 * Bytes to upload: in memory, a web stream, a Node stream (any async iterable
 * of {@link UploadChunk}s, object mode included) or a file path.
 */
export type UploadData = Uint8Array | ReadableStream<UploadChunk> | AsyncIterable<UploadChunk> | string;

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

async function* chunksOf(data: Exclude<UploadData, string>): AsyncIterable<unknown> {
  if (data instanceof Uint8Array) {
    yield data;
    return;
  }
  if (Symbol.asyncIterator in data) {
    yield* data as AsyncIterable<UploadChunk>;
    return;
  }
  const reader = (data as ReadableStream<UploadChunk>).getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) yield read.value;
}

const utf8 = new TextEncoder();

/** What a chunk that is not bytes is, for the error: `a number`, `null`, `an object`. */
function kindOf(chunk: unknown): string {
  if (chunk === null) return 'null';
  const kind = typeof chunk;
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

/**
 * The bytes of one chunk of a stream: a `Uint8Array` (a `Buffer`) as it is,
 * an `ArrayBuffer` or other typed array's bytes, a string's UTF-8 encoding.
 * @param index the chunk's place in the stream, from 1.
 * @throws AgentInfraError status 0 `invalid_request` naming `data` for anything else (a number, an object, `null`).
 */
export function bytesOfChunk(chunk: unknown, index: number): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return utf8.encode(chunk);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw localInputError(
    'data',
    `data yielded ${kindOf(chunk)} as chunk ${index}: a stream's chunks must be bytes (Uint8Array, Buffer, ArrayBuffer) or strings (sent as UTF-8).`,
  );
}

async function* counted(chunks: AsyncIterable<unknown>, size: number): AsyncIterable<Uint8Array> {
  let read = 0;
  let index = 0;
  for await (const part of chunks) {
    index += 1;
    const chunk = bytesOfChunk(part, index);
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
 * only known once read, so it is checked while it is read, and so is each
 * of its chunks: see {@link bytesOfChunk}; `size` counts a string chunk's
 * UTF-8 bytes).
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
