import type { WordVectorLookup } from './word-vector-lookup.js';

/** Float32 word and n-gram vectors, as read from the source model or before quantisation. */
export interface FloatVectorTableData {
  dimensions: number;
  sourceVocabularySize: number;
  /** Words, most frequent first. */
  words: readonly string[];
  /** Source frequency rank of each word. */
  ranks: Uint32Array;
  /** `words.length × dimensions` values, row-major. */
  vectors: Float32Array;
  /** `ngramBucketCount × dimensions` values, row-major; empty for none. */
  ngramVectors?: Float32Array;
}

/**
 * A {@link WordVectorLookup} over float32 arrays, keeping the first
 * `vocabularySize` words (default all).
 */
export function createFloatVectorTable(data: FloatVectorTableData, vocabularySize?: number): WordVectorLookup {
  const { dimensions, ranks, vectors } = data;
  const size = Math.min(vocabularySize ?? data.words.length, data.words.length);
  const ngrams = data.ngramVectors ?? new Float32Array(0);
  const index = new Map<string, number>();
  for (let i = 0; i < size; i += 1) index.set(data.words[i] ?? '', i);
  const addRow = (source: Float32Array, row: number, weight: number, target: Float32Array): void => {
    const base = row * dimensions;
    for (let i = 0; i < dimensions; i += 1) target[i] = (target[i] ?? 0) + (source[base + i] ?? 0) * weight;
  };
  return {
    dimensions,
    vocabularySize: size,
    sourceVocabularySize: data.sourceVocabularySize,
    ngramBucketCount: ngrams.length / dimensions,
    wordAt: (row) => data.words[row] ?? '',
    indexOf: (word) => index.get(word) ?? -1,
    rankOf: (row) => ranks[row] ?? 0,
    addWordVector: (row, weight, target) => addRow(vectors, row, weight, target),
    addNgramVector: (bucket, weight, target) => addRow(ngrams, bucket, weight, target),
  };
}
