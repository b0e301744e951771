/**
 * The distinct feature buckets of one segment, so that each is counted once
 * per segment. A segment has a bounded number of features, so a small table
 * (a few KB, in the fastest cache) serves any model size, where one stamp
 * per model bucket (1 MB for 2^18 buckets) missed the cache on almost every
 * n-gram of a text.
 */
export interface SegmentBucketSet {
  /** Whether `bucket` is new to the current segment; it is in the set from then on. */
  add(bucket: number): boolean;
  /** Empties the set for the next segment. */
  clear(): void;
}

/**
 * A {@link SegmentBucketSet} sized for segments of `capacity` distinct
 * buckets (non-negative integers below 2^31): open addressing in a
 * power-of-two table at most a quarter full, emptied by a stamp. A segment
 * with more buckets than that doubles the table (no segment the scorer
 * reads has, see `SEGMENT_BUCKETS_MAX`; the set stays exact either way).
 */
export function segmentBucketSet(capacity: number): SegmentBucketSet {
  let size = 16;
  while (size < capacity * 4) size *= 2;
  let keys = new Int32Array(size);
  let stamps = new Uint32Array(size);
  let stamp = 1;
  let count = 0;
  /** Puts `bucket` into the first free slot of its probe sequence (it is not in the set). */
  const place = (bucket: number) => {
    let slot = bucket & (size - 1);
    while (stamps[slot] === stamp) slot = (slot + 1) & (size - 1);
    stamps[slot] = stamp;
    keys[slot] = bucket;
  };
  const grow = () => {
    const held = keys.filter((_, slot) => stamps[slot] === stamp);
    size *= 2;
    keys = new Int32Array(size);
    stamps = new Uint32Array(size);
    for (const bucket of held) place(bucket);
  };
  return {
    add: (bucket) => {
      for (let slot = bucket & (size - 1); stamps[slot] === stamp; slot = (slot + 1) & (size - 1)) {
        if (keys[slot] === bucket) return false;
      }
      if ((count + 1) * 4 > size) grow();
      count += 1;
      place(bucket);
      return true;
    },
    clear: () => {
      count = 0;
      stamp += 1;
      if (stamp === 0xffffffff) {
        stamps.fill(0);
        stamp = 1;
      }
    },
  };
}
