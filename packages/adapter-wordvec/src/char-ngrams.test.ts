import { describe, expect, it } from 'vitest';
import { charNgramBuckets } from './char-ngrams.js';

describe('charNgramBuckets', () => {
  it('hashes the 3- to 5-grams of <word> into the bucket range, deterministically', () => {
    const buckets = charNgramBuckets('cat', 1000);
    // "<cat>" has 3 trigrams, 2 four-grams and 1 five-gram.
    expect(buckets).toHaveLength(6);
    for (const bucket of buckets) {
      expect(Number.isInteger(bucket)).toBe(true);
      expect(bucket).toBeGreaterThanOrEqual(0);
      expect(bucket).toBeLessThan(1000);
    }
    expect(charNgramBuckets('cat', 1000)).toEqual(buckets);
  });

  it('shares most buckets between a word and its misspelling', () => {
    const right = new Set(charNgramBuckets('necessary', 1 << 17));
    const wrong = charNgramBuckets('neccessary', 1 << 17);
    const shared = wrong.filter((bucket) => right.has(bucket)).length;
    expect(shared / wrong.length).toBeGreaterThan(0.5);
  });

  it('works on emoji and astral characters and bounds the work for huge tokens', () => {
    expect(charNgramBuckets('🚀', 97).length).toBe(1);
    expect(charNgramBuckets('x'.repeat(100_000), 97).length).toBeLessThan(200);
    expect(charNgramBuckets('cat', 0)).toEqual([]);
  });
});
