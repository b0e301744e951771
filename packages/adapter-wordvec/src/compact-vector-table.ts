import { addDequantized } from './int8-quantization.js';
import type { CompactVectors } from './vectors-file-format.js';
import type { WordVectorLookup } from './word-vector-lookup.js';

/**
 * A {@link WordVectorLookup} over int8 vectors, answering for the first
 * `vocabularySize` words (default all) and every n-gram bucket.
 * @throws RangeError when `vocabularySize` exceeds the words in `vectors`.
 */
export function createCompactVectorTable(vectors: CompactVectors, vocabularySize?: number): WordVectorLookup {
  const size = vocabularySize ?? vectors.words.length;
  if (size > vectors.words.length) {
    throw new RangeError(`vocabularySize ${size} exceeds the ${vectors.words.length} words of the vectors file`);
  }
  const { dimensions, wordCodes, wordScales, ngramCodes, ngramScales, ranks } = vectors;
  const index = new Map<string, number>();
  for (let i = 0; i < size; i += 1) index.set(vectors.words[i] ?? '', i);
  return {
    dimensions,
    vocabularySize: size,
    sourceVocabularySize: vectors.sourceVocabularySize,
    ngramBucketCount: ngramScales.length,
    wordAt: (row) => vectors.words[row] ?? '',
    indexOf: (word) => index.get(word) ?? -1,
    rankOf: (row) => ranks[row] ?? 0,
    addWordVector: (row, weight, target) => addDequantized(wordCodes, row * dimensions, dimensions, wordScales[row] ?? 0, weight, target),
    addNgramVector: (bucket, weight, target) =>
      addDequantized(ngramCodes, bucket * dimensions, dimensions, ngramScales[bucket] ?? 0, weight, target),
  };
}
