import { describe, expect, it } from 'vitest';
import { hasWeight, nonzeroBuckets } from './nonzero-buckets.js';

describe('nonzeroBuckets', () => {
  it('marks exactly the entries that are not zero (negative, tiny, NaN included; −0 not)', () => {
    const weights = new Float32Array(100);
    for (const [index, value] of [
      [0, 1],
      [31, -2],
      [32, 1e-30],
      [63, Number.NaN],
      [99, 0.5],
      [50, -0],
    ] as const)
      weights[index] = value;
    const bits = nonzeroBuckets(weights);
    const marked = Array.from({ length: 100 }, (_, bucket) => bucket).filter((bucket) => hasWeight(bits, bucket));
    expect(marked).toEqual([0, 31, 32, 63, 99]);
  });
});
