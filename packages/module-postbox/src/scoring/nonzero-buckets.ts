/**
 * Which n-gram buckets of a model carry a weight. Models are sparse (a few
 * thousand of 2^18 buckets), so one bit per bucket (32 KB for 2^18, small
 * enough to stay in cache) answers most lookups without reading the weight
 * table (1 MB, a cache miss per n-gram).
 */

/** One bit per entry of `weights`, set when the entry is not zero (bit `i & 31` of word `i >>> 5`). */
export function nonzeroBuckets(weights: Float32Array): Uint32Array {
  const bits = new Uint32Array(Math.ceil(weights.length / 32));
  for (let i = 0; i < weights.length; i += 1) if (weights[i] !== 0) bits[i >>> 5] = (bits[i >>> 5] ?? 0) | (1 << (i & 31));
  return bits;
}

/** Whether bucket `bucket` (a non-negative integer) has its bit set in `bits` ({@link nonzeroBuckets}). */
export const hasWeight = (bits: Uint32Array, bucket: number): boolean => ((bits[bucket >>> 5] ?? 0) & (1 << (bucket & 31))) !== 0;
