import { describe, expect, it } from 'vitest';
import { findPhrases } from './instruction-phrasing.js';
import { createSegmentReader, segmentBuckets } from './segment-features.js';
import { NOVELTY_BINS, noveltyCounter, noveltyFeatures } from './segment-novelty.js';

describe('segment novelty (#17, local-v3)', () => {
  it('counts the share of a segment’s longer words that no other segment uses', () => {
    const counter = noveltyCounter(8);
    counter.reset();
    for (const [bucket, length] of [
      [1, 5],
      [2, 6],
      [3, 2],
    ])
      counter.word(bucket ?? 0, length ?? 0);
    counter.endSegment();
    counter.word(1, 5);
    counter.word(4, 7);
    counter.endSegment();
    counter.word(5, 9);
    counter.endSegment();
    expect([counter.share(0), counter.share(1), counter.share(2)]).toEqual([0.5, 0.5, -1]);
    counter.reset();
    counter.word(1, 5);
    counter.word(2, 5);
    counter.endSegment();
    expect(counter.share(0)).toBe(1);
  });

  it('gives each segment its novelty buckets: by share, text length and whether an instruction phrase ends in it', () => {
    const features = noveltyFeatures(2 ** 18 - 1);
    expect(features(-1, 5, true)).toEqual([]);
    expect(features(0, 2, false)).toHaveLength(2);
    expect(features(1, 9, true)).toHaveLength(3);
    expect(features(1, 9, true)).not.toEqual(features(0, 9, true));
    expect(features(0.99, 2, false)).toEqual(features(1, 2, false));
    expect(NOVELTY_BINS).toBeGreaterThan(1);
  });

  it('adds the novelty buckets to the segments the trainer sees', () => {
    const text = 'your order ships on monday.\nyour order ships with tracking.\nwhat is the capital of brazil?';
    const withNovelty = segmentBuckets(createSegmentReader(18, null), [{ text, matches: findPhrases(text).matches }]);
    expect(withNovelty).toHaveLength(3);
    const novel = noveltyFeatures(2 ** 18 - 1);
    expect([...(withNovelty[2] ?? [])]).toEqual(expect.arrayContaining([...novel(1, 3, true)]));
    expect([...(withNovelty[0] ?? [])]).toEqual(expect.arrayContaining([...novel(0.25, 3, false)]));
  });
});
