import { lexicalTerms } from '@agentinfra/core';
import type { SpellingCorrector } from './spelling-correction.js';
import type { WordVectorLookup } from './word-vector-lookup.js';

/** A text's words that have vectors: unit vectors, flattened (`dimensions` per word), and their weights. */
interface AlignedWords {
  vectors: Float32Array;
  weights: Float64Array;
  count: number;
}

/** Options of {@link createWordAligner}. */
export interface WordAlignerOptions {
  /** SIF smoothing `a` of the word weights, as the sentence encoder's (see `SentenceEncoderOptions.sifA`). */
  sifA: number;
  /**
   * Exponent applied to the SIF weight: above 1 leans harder on rare words
   * (2 was best on the tuning half of bench/data/retrieval-set.json, with
   * 1–3 within 0.02 MRR).
   */
  weightExponent: number;
  /** Reads an unknown word as a table word (spelling correction); `null` leaves unknown words out. */
  correct: SpellingCorrector | null;
}

/**
 * The steps of aligning a query with several texts: one `next()` per text
 * (at most 32 × 32 word comparisons each); the generator returns one score
 * per text.
 */
export type AlignmentSteps = Generator<undefined, number[], undefined>;

/**
 * Creates a word-alignment scorer on a word-vector table: the similarity of
 * a query `q` and a text `t` is
 * ½ · Σ_{w∈q} α_w · max_{u∈t} cos(w, u) / Σ α_w + ½ · (the same from `t` to `q`),
 * over each text's content words (`lexicalTerms`: NFKC, lower case, no
 * English stop words, no repeats, at most 32), where α is the word's SIF
 * weight raised to `weightExponent`. Each word meets its best match in the
 * other text instead of being averaged away, which ranks paraphrases better
 * than the cosine of two averaged vectors (the "max-sim" of late-interaction
 * retrieval, here with static word vectors; see bench/RESULTS.md). In
 * [-1, 1]; 0 when either side has no word with a vector.
 */
export function createWordAligner(table: WordVectorLookup, options: WordAlignerOptions) {
  const { dimensions } = table;
  const zipfNorm = Math.log(table.sourceVocabularySize) + 0.5772156649;
  const weightOf = (index: number): number => {
    const probability = 1 / ((table.rankOf(index) + 1) * zipfNorm);
    return (options.sifA / (options.sifA + probability)) ** options.weightExponent;
  };

  function wordsOf(text: string): AlignedWords {
    const terms = lexicalTerms(text);
    const vectors = new Float32Array(terms.length * dimensions);
    const weights = new Float64Array(terms.length);
    let count = 0;
    for (const term of terms) {
      let index = table.indexOf(term);
      if (index < 0 && options.correct !== null) index = options.correct(term);
      if (index < 0) continue;
      const vector = vectors.subarray(count * dimensions, (count + 1) * dimensions);
      table.addWordVector(index, 1, vector);
      let squares = 0;
      for (const value of vector) squares += value * value;
      if (squares === 0) continue;
      const inverse = 1 / Math.sqrt(squares);
      for (let i = 0; i < dimensions; i += 1) vector[i] = (vector[i] ?? 0) * inverse;
      weights[count] = weightOf(index);
      count += 1;
    }
    return { vectors, weights, count };
  }

  /** Σ_{w∈from} α_w · max_{u∈to} cos(w, u) / Σ α_w. */
  function directed(from: AlignedWords, to: AlignedWords): number {
    let sum = 0;
    let total = 0;
    for (let a = 0; a < from.count; a += 1) {
      let best = -1;
      for (let b = 0; b < to.count; b += 1) {
        let dot = 0;
        const offsetA = a * dimensions;
        const offsetB = b * dimensions;
        for (let i = 0; i < dimensions; i += 1) dot += (from.vectors[offsetA + i] ?? 0) * (to.vectors[offsetB + i] ?? 0);
        if (dot > best) best = dot;
      }
      const weight = from.weights[a] ?? 0;
      sum += weight * best;
      total += weight;
    }
    return total === 0 ? 0 : sum / total;
  }

  return {
    /** The scores of `texts` against `query`, one step per text. */
    *steps(query: string, texts: readonly string[]): AlignmentSteps {
      const queryWords = wordsOf(query);
      const scores: number[] = [];
      for (const text of texts) {
        yield;
        const words = wordsOf(text);
        scores.push(queryWords.count === 0 || words.count === 0 ? 0 : (directed(queryWords, words) + directed(words, queryWords)) / 2);
      }
      return scores;
    },
  };
}

/** A scorer made by {@link createWordAligner}. */
export type WordAligner = ReturnType<typeof createWordAligner>;
