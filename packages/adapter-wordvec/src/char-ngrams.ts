/** Shortest character n-gram hashed for a word (fastText's default minimum). */
export const CHAR_NGRAM_MIN = 3;
/** Longest character n-gram hashed for a word. */
export const CHAR_NGRAM_MAX = 5;
/** Words are cut to this many code points before hashing, which bounds the work for pathological tokens. */
const MAX_HASHED_CODE_POINTS = 48;

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * The hash buckets of the character n-grams of `word` (fastText-style
 * subwords): the word is wrapped as `<word>` and every run of
 * {@link CHAR_NGRAM_MIN}..{@link CHAR_NGRAM_MAX} code points is hashed with
 * 32-bit FNV-1a over its code points, modulo `bucketCount`.
 * @param bucketCount number of buckets, a positive integer.
 * @returns one bucket per n-gram, in order of appearance (repeats kept); `[]` when `bucketCount` is 0.
 */
export function charNgramBuckets(word: string, bucketCount: number): number[] {
  if (bucketCount <= 0) return [];
  const points = Array.from(`<${word}>`.slice(0, MAX_HASHED_CODE_POINTS * 2), (char) => char.codePointAt(0) ?? 0);
  const length = Math.min(points.length, MAX_HASHED_CODE_POINTS);
  const buckets: number[] = [];
  for (let start = 0; start < length; start += 1) {
    let hash = FNV_OFFSET_BASIS;
    for (let end = start; end < length && end - start < CHAR_NGRAM_MAX; end += 1) {
      hash = Math.imul(hash ^ (points[end] ?? 0), FNV_PRIME);
      if (end - start + 1 >= CHAR_NGRAM_MIN) buckets.push((hash >>> 0) % bucketCount);
    }
  }
  return buckets;
}
