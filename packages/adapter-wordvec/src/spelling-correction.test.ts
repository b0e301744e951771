import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { seededRandom } from './build/seeded-random.js';
import { createCompactVectorTable } from './compact-vector-table.js';
import { defaultVectorsFile } from './default-vectors-file.js';
import { createFloatVectorTable } from './float-vector-table.js';
import { createSpellingCorrector, MAX_CORRECTED_LENGTH } from './spelling-correction.js';
import { countingLookup } from './test-support/counting-lookup.js';
import { decodeVectorsFile } from './vectors-file-format.js';
import type { WordVectorLookup } from './word-vector-lookup.js';

const words = ['the', 'package', 'receive', 'deploy', 'packages', 'genmaicha'];
const table = createFloatVectorTable({
  dimensions: 1,
  sourceVocabularySize: words.length,
  words,
  ranks: Uint32Array.from(words.keys()),
  vectors: new Float32Array(words.length),
});

/** Norvig's corrector spelled out candidate by candidate: the reference the hashed corrector must agree with. */
function referenceCorrection(word: string, lookup: WordVectorLookup, maxIndex: number): number {
  if (word.length < 5 || word.length > MAX_CORRECTED_LENGTH || !/^[a-z]+$/.test(word)) return -1;
  let best = -1;
  const consider = (candidate: string): void => {
    const index = lookup.indexOf(candidate);
    if (index >= 0 && index < maxIndex && (best < 0 || index < best)) best = index;
  };
  for (let i = 0; i <= word.length; i += 1) {
    const head = word.slice(0, i);
    const tail = word.slice(i);
    if (tail.length > 0) consider(head + tail.slice(1));
    if (tail.length > 1) consider(head + tail.charAt(1) + tail.charAt(0) + tail.slice(2));
    for (const letter of 'abcdefghijklmnopqrstuvwxyz') {
      if (tail.length > 0 && letter !== tail.charAt(0)) consider(head + letter + tail.slice(1));
      consider(head + letter + tail);
    }
  }
  return best;
}

describe('createSpellingCorrector', () => {
  it('finds the most frequent word one edit away (swap, deletion, insertion, substitution)', () => {
    const correct = createSpellingCorrector(table, 10);
    expect(correct('recieve')).toBe(2);
    expect(correct('pakage')).toBe(1);
    expect(correct('packagge')).toBe(1);
    expect(correct('deplay')).toBe(3);
    expect(correct('packagez')).toBe(1);
  });

  it('leaves short, non-Latin, far-off or too-rare words alone', () => {
    const correct = createSpellingCorrector(table, 10);
    expect(correct('thw')).toBe(-1);
    expect(correct('déploy')).toBe(-1);
    expect(correct('kubernetes')).toBe(-1);
    expect(correct('genmaichá')).toBe(-1);
    expect(createSpellingCorrector(table, 5)('genmaicho')).toBe(-1);
    expect(createSpellingCorrector(table, 6)('genmaicho')).toBe(5);
  });

  it('agrees with the spelled-out corrector on edits of the real vocabulary', async () => {
    const real = createCompactVectorTable(decodeVectorsFile(await readFile(defaultVectorsFile())));
    const correct = createSpellingCorrector(real, 30_000);
    const random = seededRandom(11);
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const pick = (text: string): string => text.charAt(Math.floor(random() * text.length));
    for (let trial = 0; trial < 400; trial += 1) {
      const word = real.wordAt(Math.floor(random() * 40_000));
      const at = Math.floor(random() * (word.length + 1));
      const edits = [
        word.slice(0, at) + word.slice(at + 1),
        word.slice(0, at) + pick(letters) + word.slice(at),
        word.slice(0, at) + pick(letters) + word.slice(at + 1),
        word.slice(0, at) + word.charAt(at + 1) + word.charAt(at) + word.slice(at + 2),
        Array.from({ length: 5 + Math.floor(random() * 20) }, () => pick(letters)).join(''),
      ];
      for (const typo of edits) {
        if (real.indexOf(typo) >= 0) continue;
        expect(correct(typo), typo).toBe(referenceCorrection(typo, real, 30_000));
      }
    }
  });

  // #11: a 16,000-letter word cost about 850,000 look-ups of 16,000-letter strings (23 s on /mem/query).
  it('does no look-up for a word longer than any correction and a bounded number for the longest tried', () => {
    const counted = countingLookup(table);
    const correct = createSpellingCorrector(counted, 10);
    expect(correct('a'.repeat(16_000))).toBe(-1);
    expect(correct(`${'package'.repeat(3)}zzzz`)).toBe(-1);
    expect(counted.lookups()).toBe(0);
    expect(correct('a'.repeat(MAX_CORRECTED_LENGTH))).toBe(-1);
    expect(counted.lookups()).toBeLessThanOrEqual(53 * MAX_CORRECTED_LENGTH + 25);
  });
});
