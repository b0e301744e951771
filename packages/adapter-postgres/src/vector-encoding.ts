/**
 * pgvector's text input format, `[x1,x2,…]`. Each float32 component is
 * written as its exact double value, which pgvector's `strtof` reads back as
 * the same float32, so the server stores exactly `vector`.
 */
export function vectorLiteral(vector: Float32Array): string {
  return `[${vector.join(',')}]`;
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
