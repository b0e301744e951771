/**
 * pgvector's binary input format (`vector_recv`): int16 dimensions, int16
 * zero, then each component as a big-endian float32, so the server gets
 * exactly `vector` without formatting or parsing decimal text. node-postgres
 * sends a Buffer parameter in binary format; with a `::vector` cast the
 * server reads it with `vector_recv`.
 */
export function vectorBinary(vector: Float32Array): Buffer {
  const bytes = Buffer.allocUnsafe(4 + 4 * vector.length);
  bytes.writeInt16BE(vector.length, 0);
  bytes.writeInt16BE(0, 2);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatBE(vector[i] as number, 4 + 4 * i);
  return bytes;
}

/** The float32 bytes of `vector` in platform order (little-endian on x86-64 and arm64), for the `bytea` fallback storage. */
export function vectorBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** The float32 vector stored as {@link vectorBytes} (copied, so alignment never matters). */
export function vectorFromBytes(bytes: Uint8Array): Float32Array {
  const vector = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(vector.buffer).set(bytes);
  return vector;
}
