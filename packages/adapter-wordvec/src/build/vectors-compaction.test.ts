import { describe, expect, it } from 'vitest';
import { charNgramBuckets } from '../char-ngrams.js';
import { createCompactVectorTable } from '../compact-vector-table.js';
import { DEFAULT_COMPACTION } from '../compaction-parameters.js';
import { createFloatVectorTable } from '../float-vector-table.js';
import { fitCommonComponents, removeCommonComponents } from './common-components.js';
import { trainNgramVectors } from './ngram-training.js';
import { seededRandom } from './seeded-random.js';
import { prepareWordVectors, quantizeWordVectors } from './vectors-compaction.js';
import type { RawWordVectors } from './wink-embeddings-reader.js';

const DIMENSIONS = 16;
const BUCKETS = 1 << 14;

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += (a[i] ?? 0) * (b[i] ?? 0);
    na += (a[i] ?? 0) ** 2;
    nb += (b[i] ?? 0) ** 2;
  }
  return dot / Math.sqrt(na * nb);
}

function syntheticVectors(count: number, seed: number): RawWordVectors {
  const random = seededRandom(seed);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const words = Array.from({ length: count }, (_, i) => {
    let word = '';
    for (let j = 0; j < 6 + (i % 5); j += 1) word += letters.charAt(Math.floor(random() * 26));
    return `${word}${i}`;
  });
  const vectors = Float32Array.from({ length: count * DIMENSIONS }, () => random() * 2 - 1);
  return { dimensions: DIMENSIONS, sourceVocabularySize: count, words, ranks: Uint32Array.from(words.keys()), vectors };
}

function row(vectors: Float32Array, index: number): Float32Array {
  return vectors.subarray(index * DIMENSIONS, (index + 1) * DIMENSIONS);
}

describe('common component removal', () => {
  it('finds a dominant direction and leaves centred vectors orthogonal to it', () => {
    const random = seededRandom(3);
    const direction = Float64Array.from({ length: DIMENSIONS }, (_, i) => (i === 2 ? 0.6 : i === 5 ? 0.8 : 0));
    const vectors = new Float32Array(500 * DIMENSIONS);
    for (let r = 0; r < 500; r += 1) {
      const strength = (random() * 2 - 1) * 10;
      for (let i = 0; i < DIMENSIONS; i += 1) {
        vectors[r * DIMENSIONS + i] = 3 + strength * (direction[i] ?? 0) + (random() * 2 - 1) * 0.1;
      }
    }
    const components = fitCommonComponents(vectors, DIMENSIONS, 500, 1);
    expect(Math.abs(cosine(components.directions[0] ?? [], direction))).toBeGreaterThan(0.999);
    expect(components.mean[0]).toBeCloseTo(3, 1);
    removeCommonComponents(vectors, DIMENSIONS, components);
    for (let r = 0; r < 500; r += 1) {
      let projection = 0;
      for (let i = 0; i < DIMENSIONS; i += 1) projection += (vectors[r * DIMENSIONS + i] ?? 0) * (direction[i] ?? 0);
      expect(Math.abs(projection)).toBeLessThan(0.2);
    }
  });
});

describe('n-gram training', () => {
  it('rebuilds known words and places a misspelling next to its word', () => {
    const raw = syntheticVectors(400, 5);
    const ngrams = trainNgramVectors({
      words: raw.words,
      vectors: raw.vectors,
      dimensions: DIMENSIONS,
      bucketCount: BUCKETS,
      epochs: 5,
      frequentRows: 0,
      seed: 1,
    });
    const table = createFloatVectorTable({ ...raw, ngramVectors: ngrams }, 0);
    const rebuilt = (word: string): Float32Array => {
      const sum = new Float32Array(DIMENSIONS);
      const buckets = charNgramBuckets(word, BUCKETS);
      for (const bucket of buckets) table.addNgramVector(bucket, 1 / buckets.length, sum);
      return sum;
    };
    let total = 0;
    raw.words.forEach((word, i) => {
      total += cosine(rebuilt(word), row(raw.vectors, i));
    });
    expect(total / raw.words.length).toBeGreaterThan(0.9);

    const word = raw.words[17] ?? '';
    const typo = `${word.slice(0, 2)}${word.slice(3)}`;
    const scores = raw.words.map((_, i) => cosine(rebuilt(typo), row(raw.vectors, i)));
    expect(scores.indexOf(Math.max(...scores))).toBe(17);
  });

  it('is reproducible for a seed', () => {
    const raw = syntheticVectors(50, 9);
    const options = { words: raw.words, vectors: raw.vectors, dimensions: DIMENSIONS, bucketCount: 512, epochs: 2, frequentRows: 10 };
    const a = trainNgramVectors({ ...options, seed: 4 });
    const b = trainNgramVectors({ ...options, seed: 4 });
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
  });
});

describe('compaction to int8', () => {
  it('keeps the most frequent words and bounds the error of every value by half a step', () => {
    const raw = syntheticVectors(300, 11);
    const prepared = prepareWordVectors(raw, {
      ...DEFAULT_COMPACTION,
      vocabularySize: 200,
      ngramBucketCount: 1024,
      ngramEpochs: 2,
      ngramFrequentRows: 50,
    });
    const compact = quantizeWordVectors(prepared, 200, 'tag');
    expect(compact.words).toEqual(raw.words.slice(0, 200));
    expect(compact.ngramScales).toHaveLength(1024);
    const table = createCompactVectorTable(compact);
    for (let i = 0; i < 200; i += 1) {
      const original = row(prepared.vectors, i);
      const restored = new Float32Array(DIMENSIONS);
      table.addWordVector(i, 1, restored);
      const step = compact.wordScales[i] ?? 0;
      for (let d = 0; d < DIMENSIONS; d += 1) {
        expect(Math.abs((restored[d] ?? 0) - (original[d] ?? 0))).toBeLessThanOrEqual(step / 2 + 1e-7);
      }
      expect(cosine(restored, original)).toBeGreaterThan(0.999);
    }
    const bucket = new Float32Array(DIMENSIONS);
    table.addNgramVector(7, 1, bucket);
    expect(cosine(bucket, (prepared.ngramVectors ?? new Float32Array(0)).subarray(7 * DIMENSIONS, 8 * DIMENSIONS))).toBeGreaterThan(0.999);
  });
});
