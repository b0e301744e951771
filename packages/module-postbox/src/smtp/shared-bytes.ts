/** A growable SharedArrayBuffer (ES2024; Node 20 has it, the ES2023 lib this project compiles against does not declare it). */
interface GrowableSharedArrayBuffer extends SharedArrayBuffer {
  grow(newByteLength: number): void;
}
const GrowableSharedArrayBuffer = SharedArrayBuffer as unknown as new (
  byteLength: number,
  options: { maxByteLength: number },
) => GrowableSharedArrayBuffer;

/** Bytes reserved at first; the buffer doubles from there as chunks arrive. */
const INITIAL_BYTES = 64 * 1024;

/** Collects one message's bytes as its chunks arrive (see {@link createSharedBytes}). */
export interface SharedBytes {
  /** Copies `chunk` after the bytes so far; bytes past `maxBytes` are counted but not kept. */
  add(chunk: Uint8Array): void;
  /** Bytes added so far, including any past `maxBytes`. */
  readonly size: number;
  /**
   * The bytes kept (at most `maxBytes`) as a Buffer over the shared memory
   * (its `buffer` is a SharedArrayBuffer), without a copy.
   */
  bytes(): Buffer;
}

/**
 * A collector that copies each chunk of a message into one growable
 * SharedArrayBuffer as it arrives, so that no event-loop turn copies the
 * whole message (a 10 MiB `Buffer.concat` took 25–50 ms on 2 busy cores,
 * #11), and a worker thread it is posted to (the MIME parser pool) sees the
 * same memory instead of a structured-clone copy. Memory grows by doubling,
 * up to `maxBytes`.
 * @param maxBytes most bytes kept (the SMTP size limit); a positive integer.
 */
export function createSharedBytes(maxBytes: number): SharedBytes {
  const memory = new GrowableSharedArrayBuffer(Math.min(INITIAL_BYTES, maxBytes), { maxByteLength: maxBytes });
  let size = 0;
  return {
    add(chunk) {
      const kept = Math.max(0, Math.min(chunk.length, maxBytes - size));
      if (kept > 0) {
        if (size + kept > memory.byteLength) memory.grow(Math.min(maxBytes, Math.max(size + kept, memory.byteLength * 2)));
        new Uint8Array(memory, size, kept).set(chunk.subarray(0, kept));
      }
      size += chunk.length;
    },
    get size() {
      return size;
    },
    bytes: () => Buffer.from(memory, 0, Math.min(size, maxBytes)),
  };
}
