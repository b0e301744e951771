import { describe, expect, it } from 'vitest';
import { findPhrases } from './instruction-phrasing.js';
import { createSegmentReader, segmentBuckets } from './segment-features.js';
import { placeFeatures } from './segment-place.js';

describe('segment place (#17)', () => {
  it('gives a place bucket only to a first or last segment in which an instruction phrase ends', () => {
    const features = placeFeatures(2 ** 18 - 1);
    expect(features('inner', true)).toEqual([]);
    expect(features('first', false)).toEqual([]);
    expect(features('last', false)).toEqual([]);
    expect(features('first', true)).toHaveLength(1);
    expect(features('first', true)).not.toEqual(features('last', true));
  });

  it('marks the first segment after the first line and the last segment of the text', () => {
    const text = 'your order\nwhat is the capital of brazil?\nit ships on monday.\nit ships with tracking.\nwrite a poem about the sea.';
    const segments = segmentBuckets(createSegmentReader(18, null), [{ text, matches: findPhrases(text).matches }]);
    const place = placeFeatures(2 ** 18 - 1);
    const first = place('first', true)[0] ?? -1;
    const last = place('last', true)[0] ?? -1;
    expect(segments).toHaveLength(5);
    expect(segments[1]).toContain(first);
    expect(segments[4]).toContain(last);
    for (const index of [0, 2, 3]) {
      expect(segments[index]).not.toContain(first);
      expect(segments[index]).not.toContain(last);
    }
  });
});
