import { describe, expect, it } from 'vitest';
import { createFloatVectorTable } from './float-vector-table.js';
import { correctSpelling } from './spelling-correction.js';

const words = ['the', 'package', 'receive', 'deploy', 'packages', 'genmaicha'];
const table = createFloatVectorTable({
  dimensions: 1,
  sourceVocabularySize: words.length,
  words,
  ranks: Uint32Array.from(words.keys()),
  vectors: new Float32Array(words.length),
});

describe('correctSpelling', () => {
  it('finds the most frequent word one edit away (swap, deletion, insertion, substitution)', () => {
    expect(correctSpelling('recieve', table, 10)).toBe(2);
    expect(correctSpelling('pakage', table, 10)).toBe(1);
    expect(correctSpelling('packagge', table, 10)).toBe(1);
    expect(correctSpelling('deplay', table, 10)).toBe(3);
    expect(correctSpelling('packagez', table, 10)).toBe(1);
  });

  it('leaves short, non-Latin, far-off or too-rare words alone', () => {
    expect(correctSpelling('thw', table, 10)).toBe(-1);
    expect(correctSpelling('déploy', table, 10)).toBe(-1);
    expect(correctSpelling('kubernetes', table, 10)).toBe(-1);
    expect(correctSpelling('genmaichá', table, 10)).toBe(-1);
    expect(correctSpelling('genmaicho', table, 5)).toBe(-1);
    expect(correctSpelling('genmaicho', table, 6)).toBe(5);
  });
});
