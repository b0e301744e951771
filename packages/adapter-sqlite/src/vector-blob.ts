/** The little-endian float32 bytes of `vector` (sqlite-vec's `float[N]` blob format), sharing its memory. */
export function vectorBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}
