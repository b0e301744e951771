import type { WordVectorLookup } from './word-vector-lookup.js';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
/** Shortest unknown word worth correcting: shorter ones have too many neighbours to pick from. */
const MIN_CORRECTED_LENGTH = 5;
const LATIN_WORD = /^[a-z]+$/;

/**
 * Finds the most frequent vocabulary word one edit away from an unknown word
 * (a letter deleted, inserted, replaced, or two neighbours swapped: Norvig's
 * spelling corrector, candidates ranked by frequency instead of a language model).
 * Only lower-case Latin words of at least 5 letters are tried, and only the
 * `maxIndex` most frequent words are accepted, so that rare real words are
 * not bent into other rare words.
 * @returns the index of the correction in `table`, or -1.
 */
export function correctSpelling(word: string, table: WordVectorLookup, maxIndex: number): number {
  if (word.length < MIN_CORRECTED_LENGTH || !LATIN_WORD.test(word)) return -1;
  let best = -1;
  const consider = (candidate: string): void => {
    const index = table.indexOf(candidate);
    if (index >= 0 && index < maxIndex && (best < 0 || index < best)) best = index;
  };
  for (let i = 0; i <= word.length; i += 1) {
    const head = word.slice(0, i);
    const tail = word.slice(i);
    if (tail.length > 0) consider(head + tail.slice(1));
    if (tail.length > 1) consider(head + tail.charAt(1) + tail.charAt(0) + tail.slice(2));
    for (const letter of LETTERS) {
      if (tail.length > 0 && letter !== tail.charAt(0)) consider(head + letter + tail.slice(1));
      consider(head + letter + tail);
    }
  }
  return best;
}
