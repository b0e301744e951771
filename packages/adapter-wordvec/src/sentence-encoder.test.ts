import { describe, expect, it } from 'vitest';
import { seededRandom } from './build/seeded-random.js';
import { CHAR_NGRAM_MAX, CHAR_NGRAM_MIN } from './char-ngrams.js';
import { createFloatVectorTable } from './float-vector-table.js';
import { createSentenceEncoder } from './sentence-encoder.js';
import { MAX_CORRECTED_LENGTH } from './spelling-correction.js';
import { countingLookup } from './test-support/counting-lookup.js';
import { tokenize } from './text-tokens.js';

const words = ['the', 'backup', 'failed', 'nightly', 'package', 'receive', 'deploy'];
const dimensions = 4;
const random = seededRandom(3);
const table = createFloatVectorTable({
  dimensions,
  sourceVocabularySize: 1_000,
  words,
  ranks: Uint32Array.from(words.keys()),
  vectors: Float32Array.from({ length: words.length * dimensions }, () => random() - 0.5),
  ngramVectors: Float32Array.from({ length: 64 * dimensions }, () => random() - 0.5),
});
const options = { sifA: 2e-4, ngramFallback: true, spellingCorrectionRows: 5 };

/** Most n-grams of one word: every 3- to 5-gram of its first 48 code points (`<` and `>` included). */
const MAX_NGRAMS = (CHAR_NGRAM_MAX - CHAR_NGRAM_MIN + 1) * 48;

/** A text of `length` characters of distinct lower-case words of `wordLength` letters that are not in `words`. */
function unknownWords(length: number, wordLength: number): string {
  const pick = seededRandom(wordLength);
  let text = '';
  while (text.length < length) {
    text += `${Array.from({ length: wordLength }, () => String.fromCharCode(97 + Math.floor(pick() * 26))).join('')} `;
  }
  return text;
}

describe('createSentenceEncoder', () => {
  it('gives the same unit vector whether run at once or step by step', () => {
    const encode = createSentenceEncoder(table, options);
    const text = 'The nightly backup failed; recieve the pakage and deploy zzqx 🚀';
    const steps = encode.steps(text);
    let count = 0;
    let step = steps.next();
    while (!step.done) {
      count += 1;
      step = steps.next();
    }
    expect(Array.from(step.value)).toEqual(Array.from(encode(text)));
    expect(count).toBeGreaterThanOrEqual(tokenize(text).length);
    expect(Math.hypot(...step.value)).toBeCloseTo(1, 5);
  });

  // #11: one 16,000-letter token took 23 s: its spelling candidates were looked up one by one.
  it('reads a huge token with one look-up and a bounded number of n-gram vectors', () => {
    const counted = countingLookup(table);
    const encode = createSentenceEncoder(counted, options);
    expect(Math.hypot(...encode('a'.repeat(16_000)))).toBeCloseTo(1, 5);
    expect(counted.lookups()).toBe(1);
    expect(counted.additions()).toBeLessThanOrEqual(MAX_NGRAMS);
  });

  // #11: work is linear in the text and each step is bounded, whatever the words.
  it('bounds the work of every step on hostile text', () => {
    for (const wordLength of [5, 9, MAX_CORRECTED_LENGTH, 60]) {
      const counted = countingLookup(table);
      const text = unknownWords(32_768, wordLength);
      const steps = createSentenceEncoder(counted, options).steps(text);
      let [lookups, additions, count] = [0, 0, 0];
      for (let step = steps.next(); !step.done; step = steps.next()) {
        expect(counted.lookups() - lookups).toBeLessThanOrEqual(1 + 53 * MAX_CORRECTED_LENGTH + 25);
        expect(counted.additions() - additions).toBeLessThanOrEqual(MAX_NGRAMS);
        [lookups, additions, count] = [counted.lookups(), counted.additions(), count + 1];
      }
      expect(count).toBeGreaterThanOrEqual(tokenize(text).length);
      // Candidates are looked up only when they pass the vocabulary filter: a few per word at most.
      expect(lookups / tokenize(text).length, `words of ${wordLength} letters`).toBeLessThan(2);
    }
  });
});
