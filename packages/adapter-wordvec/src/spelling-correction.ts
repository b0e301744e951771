import type { WordVectorLookup } from './word-vector-lookup.js';

/** Shortest unknown word worth correcting: shorter ones have too many neighbours to pick from. */
const MIN_CORRECTED_LENGTH = 5;
/**
 * Longest unknown word tried (issue #11): one edit changes the length by at
 * most one, and the longest Latin word among the shipped file's 100,000 words
 * has 23 letters (19 among the 30,000 the embedder corrects towards), so a
 * longer word has no correction. Without this bound a word of n letters cost
 * about 53·n look-ups of n-letter strings: quadratic in the request.
 */
export const MAX_CORRECTED_LENGTH = 24;
const LATIN_WORD = /^[a-z]+$/;
const LETTER_A = 97;
const ALPHABET = 26;
/** Odd multiplier of the polynomial hash (the 32-bit FNV prime). */
const BASE = 0x01000193;
/** The filter of vocabulary hashes has 2^22 bits (512 KiB): with 30,000 words, 0.7% of other hashes pass it. */
const FILTER_BITS = 22;
/** Multiplier spreading a hash over the filter (Fibonacci hashing: 2^32 / golden ratio). */
const SPREAD = 0x9e3779b1;

/** Returns the index in the table of the correction of an unknown word, or -1. */
export type SpellingCorrector = (word: string) => number;

/** Polynomial hash mod 2^32 of letter codes 1..26: H(x ++ y) = H(x)·BASE^|y| + H(y). */
function hashOfWord(word: string): number {
  let hash = 0;
  for (let i = 0; i < word.length; i += 1) hash = (Math.imul(hash, BASE) + word.charCodeAt(i) - LETTER_A + 1) | 0;
  return hash;
}

/**
 * Creates a corrector that reads an unknown word as the most frequent
 * vocabulary word one edit away from it (a letter deleted, inserted, replaced,
 * or two neighbours swapped: Norvig's spelling corrector, candidates ranked by
 * frequency instead of a language model). Only lower-case Latin words of 5 to
 * {@link MAX_CORRECTED_LENGTH} letters are tried, and only the `maxIndex` most
 * frequent words are accepted, so that rare real words are not bent into
 * other rare words.
 *
 * Work (issue #11): the Latin words among the first `maxIndex` rows are
 * hashed once, into a 512 KiB bit filter, when the corrector is created. A
 * word of n letters then costs O(n) to hash its prefixes and suffixes and
 * 53·n + 25 constant-time filter checks of its candidates; only a candidate
 * that passes the filter (a vocabulary word's hash, or about 0.7% of others)
 * is spelled out and looked up in `table`, so the answer is exact.
 * @param maxIndex rows of `table` a correction may come from (the most frequent words).
 */
export function createSpellingCorrector(table: WordVectorLookup, maxIndex: number): SpellingCorrector {
  const rows = Math.min(maxIndex, table.vocabularySize);
  const filter = new Uint32Array(2 ** (FILTER_BITS - 5));
  let filled = false;
  for (let row = 0; row < rows; row += 1) {
    const word = table.wordAt(row);
    if (word.length >= MIN_CORRECTED_LENGTH - 1 && word.length <= MAX_CORRECTED_LENGTH + 1 && LATIN_WORD.test(word)) {
      const bit = Math.imul(hashOfWord(word), SPREAD) >>> (32 - FILTER_BITS);
      filter[bit >>> 5] = (filter[bit >>> 5] ?? 0) | (1 << (bit & 31));
      filled = true;
    }
  }
  /** Whether a vocabulary word may have this hash (false: certainly none has). */
  const known = (hash: number): boolean => {
    const bit = Math.imul(hash, SPREAD) >>> (32 - FILTER_BITS);
    return (((filter[bit >>> 5] ?? 0) >>> (bit & 31)) & 1) === 1;
  };
  const powers = new Int32Array(MAX_CORRECTED_LENGTH + 2);
  powers[0] = 1;
  for (let k = 1; k < powers.length; k += 1) powers[k] = Math.imul(powers[k - 1] ?? 0, BASE);
  const codes = new Int32Array(MAX_CORRECTED_LENGTH);
  const prefix = new Int32Array(MAX_CORRECTED_LENGTH + 1);
  const suffix = new Int32Array(MAX_CORRECTED_LENGTH + 2);

  return (word) => {
    const n = word.length;
    if (n < MIN_CORRECTED_LENGTH || n > MAX_CORRECTED_LENGTH || !LATIN_WORD.test(word) || !filled) return -1;
    for (let i = 0; i < n; i += 1) {
      const code = word.charCodeAt(i) - LETTER_A + 1;
      codes[i] = code;
      prefix[i + 1] = (Math.imul(prefix[i] ?? 0, BASE) + code) | 0;
    }
    suffix[n] = 0;
    suffix[n + 1] = 0;
    for (let i = n - 1; i >= 0; i -= 1) suffix[i] = (Math.imul(codes[i] ?? 0, powers[n - 1 - i] ?? 0) + (suffix[i + 1] ?? 0)) | 0;

    let best = -1;
    const check = (candidate: string): void => {
      const index = table.indexOf(candidate);
      if (index >= 0 && index < maxIndex && (best < 0 || index < best)) best = index;
    };
    // Each candidate's hash is combined from the word's prefix and suffix hashes; only a
    // candidate whose hash is a vocabulary word's is spelled out and looked up.
    for (let i = 0; i <= n; i += 1) {
      const head = prefix[i] ?? 0;
      const rest = n - i;
      if (rest > 0 && known(Math.imul(head, powers[rest - 1] ?? 0) + (suffix[i + 1] ?? 0))) {
        check(word.slice(0, i) + word.slice(i + 1));
      }
      if (rest > 1) {
        const swapped = Math.imul(Math.imul(head, BASE) + (codes[i + 1] ?? 0), BASE) + (codes[i] ?? 0);
        if (known(Math.imul(swapped, powers[rest - 2] ?? 0) + (suffix[i + 2] ?? 0))) {
          check(word.slice(0, i) + word.charAt(i + 1) + word.charAt(i) + word.slice(i + 2));
        }
      }
      for (let letter = 1; letter <= ALPHABET; letter += 1) {
        const extended = Math.imul(head, BASE) + letter;
        if (rest > 0 && letter !== codes[i] && known(Math.imul(extended, powers[rest - 1] ?? 0) + (suffix[i + 1] ?? 0))) {
          check(word.slice(0, i) + String.fromCharCode(LETTER_A + letter - 1) + word.slice(i + 1));
        }
        if (known(Math.imul(extended, powers[rest] ?? 0) + (suffix[i] ?? 0))) {
          check(word.slice(0, i) + String.fromCharCode(LETTER_A + letter - 1) + word.slice(i));
        }
      }
    }
    return best;
  };
}
