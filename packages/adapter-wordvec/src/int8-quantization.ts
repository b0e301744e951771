/**
 * Symmetric int8 quantisation with one scale per vector: each value becomes
 * `round(value / scale)` with `scale = max|value| / 127`, so that
 * `value ≈ code * scale` with an absolute error of at most `scale / 2`
 * (1/254 of the vector's largest magnitude).
 * @param vector the values to quantise (any length; finite numbers).
 * @param codes where the codes go, from `offset` on (`vector.length` entries are written).
 * @returns the scale (0 for an all-zero vector, whose codes are all 0).
 */
export function quantizeInt8(vector: ArrayLike<number>, codes: Int8Array, offset = 0): number {
  let maxAbs = 0;
  for (let i = 0; i < vector.length; i += 1) maxAbs = Math.max(maxAbs, Math.abs(vector[i] ?? 0));
  const scale = maxAbs / 127;
  for (let i = 0; i < vector.length; i += 1) {
    codes[offset + i] = scale === 0 ? 0 : Math.max(-127, Math.min(127, Math.round((vector[i] ?? 0) / scale)));
  }
  return scale;
}

/**
 * Adds `weight * code * scale` for `length` codes starting at `offset` into `target`:
 * the inverse of {@link quantizeInt8}, fused with the weighted sum that averaging needs.
 */
export function addDequantized(
  codes: Int8Array,
  offset: number,
  length: number,
  scale: number,
  weight: number,
  target: Float32Array,
): void {
  const factor = scale * weight;
  for (let i = 0; i < length; i += 1) target[i] = (target[i] ?? 0) + (codes[offset + i] ?? 0) * factor;
}
