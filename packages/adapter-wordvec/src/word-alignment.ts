import { lexicalTerms } from '@agentinfra/core';
import { sifWeights } from './sentence-encoder.js';
import type { SpellingCorrector } from './spelling-correction.js';
import type { WordVectorLookup } from './word-vector-lookup.js';

/** A text's words that have vectors (their unit vectors and weights), and its words that have none and no correction. */
interface AlignedWords {
  vectors: Float32Array[];
  weights: number[];
  /** Unknown words as written (`inv88231`, `quuxcorp`): they match only themselves. */
  literals: Set<string>;
}

/**
 * Unit word vectors kept between calls (the most recently used; 400 bytes
 * each at 100 dimensions, 6.4 MB in all), so that the words of candidates
 * met again are not dequantised and normalised again.
 */
export const ALIGNED_WORD_CACHE = 16_384;

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
  /** Reads an unknown word as a table word (the sentence encoder's `correct`); `null` leaves unknown words out. */
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
 * retrieval, here with static word vectors; see bench/RESULTS.md). A word
 * with no vector and no spelling correction (an identifier such as
 * `INV88231`, a made-up name) has nothing to be similar to, so it counts
 * only where the other text has the very same word: then it is a match of
 * similarity 1 on both sides, weighted as the rarest word of the table.
 * Unknown words the two texts do not share are left out, as before. In
 * [-1, 1]; 0 when neither side has a word with a vector or a shared unknown word.
 */
export function createWordAligner(table: WordVectorLookup, options: WordAlignerOptions) {
  const { dimensions } = table;
  const sifWeight = sifWeights(table, options.sifA);
  const weightOf = (index: number): number => sifWeight(table.rankOf(index)) ** options.weightExponent;
  const literalWeight = sifWeight(table.sourceVocabularySize) ** options.weightExponent;

  const unitVectors = new Map<number, Float32Array | null>();

  /** The unit vector of the word at `index` (`null` for a zero vector). */
  function unitVectorOf(index: number): Float32Array | null {
    const cached = unitVectors.get(index);
    if (cached !== undefined) return cached;
    const vector = new Float32Array(dimensions);
    table.addWordVector(index, 1, vector);
    let squares = 0;
    for (const value of vector) squares += value * value;
    const inverse = squares === 0 ? 0 : 1 / Math.sqrt(squares);
    for (let i = 0; i < dimensions; i += 1) vector[i] = (vector[i] ?? 0) * inverse;
    const unit = squares === 0 ? null : vector;
    unitVectors.set(index, unit);
    if (unitVectors.size > ALIGNED_WORD_CACHE) unitVectors.delete(unitVectors.keys().next().value as number);
    return unit;
  }

  function wordsOf(text: string): AlignedWords {
    const words: AlignedWords = { vectors: [], weights: [], literals: new Set() };
    for (const term of lexicalTerms(text)) {
      let index = table.indexOf(term);
      if (index < 0 && options.correct !== null) index = options.correct(term);
      if (index < 0) {
        words.literals.add(term);
        continue;
      }
      const vector = unitVectorOf(index);
      if (vector === null) continue;
      words.vectors.push(vector);
      words.weights.push(weightOf(index));
    }
    return words;
  }

  /**
   * (Σ_{w∈from} α_w · max_{u∈to} cos(w, u) + α_unknown · shared) / (Σ α_w + α_unknown · shared),
   * with `shared` unknown words that both texts have (a word meeting no vector on the other side scores 0).
   */
  function directed(from: AlignedWords, to: AlignedWords, shared: number): number {
    let sum = literalWeight * shared;
    let total = literalWeight * shared;
    from.vectors.forEach((a, position) => {
      let best = to.vectors.length === 0 ? 0 : -1;
      for (const b of to.vectors) {
        let dot = 0;
        for (let i = 0; i < dimensions; i += 1) dot += (a[i] as number) * (b[i] as number);
        if (dot > best) best = dot;
      }
      const weight = from.weights[position] ?? 0;
      sum += weight * best;
      total += weight;
    });
    return total === 0 ? 0 : sum / total;
  }

  /** How many unknown words both texts have. */
  function sharedLiterals(a: AlignedWords, b: AlignedWords): number {
    let shared = 0;
    for (const literal of a.literals) if (b.literals.has(literal)) shared += 1;
    return shared;
  }

  return {
    /** The scores of `texts` against `query`, one step per text. */
    *steps(query: string, texts: readonly string[]): AlignmentSteps {
      const queryWords = wordsOf(query);
      const scores: number[] = [];
      for (const text of texts) {
        yield;
        const words = wordsOf(text);
        const shared = sharedLiterals(queryWords, words);
        const empty = shared === 0 && (queryWords.vectors.length === 0 || words.vectors.length === 0);
        scores.push(empty ? 0 : (directed(queryWords, words, shared) + directed(words, queryWords, shared)) / 2);
      }
      return scores;
    },
  };
}

/** A scorer made by {@link createWordAligner}. */
export type WordAligner = ReturnType<typeof createWordAligner>;
