import { charNgramBuckets } from '../char-ngrams.js';
import { seededRandom, shuffle } from './seeded-random.js';

/** Options of {@link trainNgramVectors}. */
export interface NgramTrainingOptions {
  /** Words to learn from, row `i` of `vectors` belonging to `words[i]`. */
  words: readonly string[];
  /** Row-major target vectors, `dimensions` per word. */
  vectors: Float32Array;
  dimensions: number;
  /** Number of hash buckets (see {@link charNgramBuckets}). */
  bucketCount: number;
  /** Passes over the words; the learning rate falls linearly to 0 over them. */
  epochs: number;
  /** Rows below this index are visited three times per pass, which favours frequent words (and their typos). */
  frequentRows: number;
  /** Seed of the shuffling, for reproducible output. */
  seed: number;
}

const LEARNING_RATE = 0.5;

/**
 * Learns one vector per character n-gram bucket so that the mean of a word's
 * n-gram vectors approximates its word vector (least squares by stochastic
 * gradient descent, as fastText composes subwords). The result lets the
 * embedder place a word it has no vector for (rare, misspelt, new) near the
 * words that share its spelling.
 * @returns `bucketCount × dimensions` values, row-major; buckets no word hashed to stay 0.
 */
export function trainNgramVectors(options: NgramTrainingOptions): Float32Array {
  const { dimensions, vectors, bucketCount } = options;
  const buckets = options.words.map((word) => Uint32Array.from(charNgramBuckets(word, bucketCount)));
  const order: number[] = [];
  options.words.forEach((_, row) => {
    order.push(row);
    if (row < options.frequentRows) order.push(row, row);
  });
  const random = seededRandom(options.seed);
  const ngrams = new Float32Array(bucketCount * dimensions);
  const error = new Float32Array(dimensions);
  for (let epoch = 0; epoch < options.epochs; epoch += 1) {
    shuffle(order, random);
    const rate = LEARNING_RATE * (1 - epoch / options.epochs);
    for (const row of order) {
      const wordBuckets = buckets[row] ?? new Uint32Array(0);
      if (wordBuckets.length === 0) continue;
      error.fill(0);
      for (const bucket of wordBuckets) {
        const base = bucket * dimensions;
        for (let i = 0; i < dimensions; i += 1) error[i] = (error[i] ?? 0) + (ngrams[base + i] ?? 0);
      }
      const share = 1 / wordBuckets.length;
      for (let i = 0; i < dimensions; i += 1) {
        error[i] = (vectors[row * dimensions + i] ?? 0) - (error[i] ?? 0) * share;
      }
      const step = rate * share;
      for (const bucket of wordBuckets) {
        const base = bucket * dimensions;
        for (let i = 0; i < dimensions; i += 1) ngrams[base + i] = (ngrams[base + i] ?? 0) + step * (error[i] ?? 0);
      }
    }
  }
  return ngrams;
}
