import { describe, expect, it } from 'vitest';
import { segmentBucketSet } from './segment-bucket-set.js';

describe('segmentBucketSet', () => {
  it('tells each bucket new once per segment, colliding buckets apart, and starts over when cleared', () => {
    const set = segmentBucketSet(8);
    // 5, 37 and 69 share their slot in a table of 32.
    expect([5, 37, 5, 69, 37, 2 ** 30].map((bucket) => set.add(bucket))).toEqual([true, true, false, true, false, true]);
    set.clear();
    expect([37, 37, 5].map((bucket) => set.add(bucket))).toEqual([true, false, true]);
  });

  it('grows for a segment with more distinct buckets than its capacity, and stays exact', () => {
    const set = segmentBucketSet(3);
    const buckets = Array.from({ length: 500 }, (_, index) => (index * 7919) % 100_003);
    expect(buckets.map((bucket) => set.add(bucket)).every(Boolean)).toBe(true);
    expect(buckets.map((bucket) => set.add(bucket)).some(Boolean)).toBe(false);
    set.clear();
    expect(set.add(buckets[0] as number)).toBe(true);
  });
});
