import { charNgramBuckets } from './char-ngrams.js';
import { createSpellingCorrector, type SpellingCorrector } from './spelling-correction.js';
import { tokenizeInPieces } from './text-tokens.js';
import type { WordVectorLookup } from './word-vector-lookup.js';

/** How word vectors are pooled into one text vector. */
export interface SentenceEncoderOptions {
  /**
   * SIF smoothing `a` (Arora et al., 2017, "A Simple but Tough-to-Beat Baseline
   * for Sentence Embeddings"): a word of estimated probability `p` is weighted
   * `a / (a + p)`, where `p` comes from the word's frequency rank by Zipf's law.
   * `0` weights every word 1 (plain average).
   */
  sifA: number;
  /** Build vectors for words missing from the table from their character n-grams. */
  ngramFallback: boolean;
  /**
   * Read an unknown word as the most frequent of the first `spellingCorrectionRows`
   * table words one edit away from it (see {@link createSpellingCorrector}) before
   * falling back to n-grams. 0 turns correction off.
   */
  spellingCorrectionRows: number;
}

/**
 * The steps of encoding one text: each `next()` does a bounded amount of work
 * (tokenising at most {@link TOKENIZE_PIECE_LENGTH} code units, or reading one
 * token) and the generator returns the vector.
 */
export type EncodingSteps = Generator<undefined, Float32Array, undefined>;

/** Turns a text into a unit-length vector (or the zero vector when no token has a vector). */
export interface SentenceEncoder {
  (text: string): Float32Array;
  /** The same encoding as a generator of bounded steps, for callers that interleave it with other work (see `createStepRunner`). */
  steps(text: string): EncodingSteps;
  /** The spelling corrector it reads unknown words with (`null` when correction is off), for other readers of the same table. */
  readonly correct: SpellingCorrector | null;
}

/** Code units tokenised per step (a piece is cut at a space; see `tokenizeInPieces`). */
export const TOKENIZE_PIECE_LENGTH = 4_096;

/** Harmonic number H(n) ≈ ln n + γ: the normaliser of Zipf's law over n words. */
function harmonicNumber(n: number): number {
  return Math.log(n) + 0.5772156649 + 1 / (2 * n);
}

/**
 * SIF weights of `table`'s words by frequency rank (0-based): a word of
 * estimated probability `p` (Zipf's law over the source vocabulary) weighs
 * `sifA / (sifA + p)`, in (0, 1]; every word weighs 1 when `sifA` is 0. See
 * `SentenceEncoderOptions.sifA`.
 */
export function sifWeights(table: WordVectorLookup, sifA: number): (rank: number) => number {
  const zipfNorm = harmonicNumber(table.sourceVocabularySize);
  return (rank) => {
    if (sifA === 0) return 1;
    const probability = 1 / ((rank + 1) * zipfNorm);
    return sifA / (sifA + probability);
  };
}

/**
 * Creates an encoder that averages the word vectors of a text's tokens
 * (see {@link tokenize}), SIF-weighted; an unknown word is read as its
 * spelling correction when there is one, else as the mean of its character
 * n-gram vectors. The sum is L2-normalised.
 *
 * Work is linear in the text and bounded per token (issue #11): a token is
 * one table look-up, plus for an unknown word at most 53·24 + 25 hash checks
 * of spelling candidates (`MAX_CORRECTED_LENGTH`) and at most 135 n-gram
 * vectors (words are hashed on their first 48 code points).
 */
export function createSentenceEncoder(table: WordVectorLookup, options: SentenceEncoderOptions): SentenceEncoder {
  const weightOfRank = sifWeights(table, options.sifA);
  const unknownWeight = weightOfRank(table.sourceVocabularySize);
  const useNgrams = options.ngramFallback && table.ngramBucketCount > 0;
  const correct = options.spellingCorrectionRows > 0 ? createSpellingCorrector(table, options.spellingCorrectionRows) : null;

  function* steps(text: string): EncodingSteps {
    const sum = new Float32Array(table.dimensions);
    for (const tokens of tokenizeInPieces(text, TOKENIZE_PIECE_LENGTH)) {
      yield;
      for (const token of tokens) {
        let index = table.indexOf(token);
        if (index < 0 && correct !== null) index = correct(token);
        if (index >= 0) {
          table.addWordVector(index, weightOfRank(table.rankOf(index)), sum);
        } else if (useNgrams) {
          const buckets = charNgramBuckets(token, table.ngramBucketCount);
          const share = unknownWeight / buckets.length;
          for (const bucket of buckets) table.addNgramVector(bucket, share, sum);
        }
        yield;
      }
    }
    let squares = 0;
    for (const value of sum) squares += value * value;
    if (squares === 0) return sum;
    const inverse = 1 / Math.sqrt(squares);
    for (let i = 0; i < sum.length; i += 1) sum[i] = (sum[i] ?? 0) * inverse;
    return sum;
  }

  const encode = (text: string): Float32Array => {
    const run = steps(text);
    for (;;) {
      const step = run.next();
      if (step.done) return step.value;
    }
  };
  return Object.assign(encode, { steps, correct });
}
