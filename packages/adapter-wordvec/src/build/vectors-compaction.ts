import type { CompactionParameters } from '../compaction-parameters.js';
import type { FloatVectorTableData } from '../float-vector-table.js';
import { quantizeInt8 } from '../int8-quantization.js';
import type { CompactVectors } from '../vectors-file-format.js';
import { fitCommonComponents, removeCommonComponents } from './common-components.js';
import { trainNgramVectors } from './ngram-training.js';
import type { RawWordVectors } from './wink-embeddings-reader.js';

/**
 * Post-processes the source vectors in float precision: removes the common
 * components fitted on the kept vocabulary from every word (in place in
 * `raw.vectors`), then learns n-gram vectors from all source words, so that
 * words outside the kept vocabulary are still represented.
 * @returns every source word plus the n-gram vectors, still float32.
 */
export function prepareWordVectors(raw: RawWordVectors, parameters: CompactionParameters): FloatVectorTableData {
  const kept = Math.min(parameters.vocabularySize, raw.words.length);
  if (parameters.commonComponents > 0) {
    const components = fitCommonComponents(raw.vectors, raw.dimensions, kept, parameters.commonComponents);
    removeCommonComponents(raw.vectors, raw.dimensions, components);
  }
  const ngramVectors =
    parameters.ngramBucketCount > 0
      ? trainNgramVectors({
          words: raw.words,
          vectors: raw.vectors,
          dimensions: raw.dimensions,
          bucketCount: parameters.ngramBucketCount,
          epochs: parameters.ngramEpochs,
          frequentRows: parameters.ngramFrequentRows,
          seed: parameters.seed,
        })
      : new Float32Array(0);
  return { ...raw, ngramVectors };
}

/**
 * Keeps the first `vocabularySize` words of `data` and int8-quantises them and
 * the n-gram vectors with one scale per vector.
 */
export function quantizeWordVectors(data: FloatVectorTableData, vocabularySize: number, buildTag: string): CompactVectors {
  const { dimensions } = data;
  const kept = Math.min(vocabularySize, data.words.length);
  const ngrams = data.ngramVectors ?? new Float32Array(0);
  const buckets = ngrams.length / dimensions;
  const wordCodes = new Int8Array(kept * dimensions);
  const wordScales = new Float32Array(kept);
  for (let row = 0; row < kept; row += 1) {
    wordScales[row] = quantizeInt8(data.vectors.subarray(row * dimensions, (row + 1) * dimensions), wordCodes, row * dimensions);
  }
  const ngramCodes = new Int8Array(buckets * dimensions);
  const ngramScales = new Float32Array(buckets);
  for (let bucket = 0; bucket < buckets; bucket += 1) {
    ngramScales[bucket] = quantizeInt8(ngrams.subarray(bucket * dimensions, (bucket + 1) * dimensions), ngramCodes, bucket * dimensions);
  }
  return {
    dimensions,
    sourceVocabularySize: data.sourceVocabularySize,
    words: data.words.slice(0, kept),
    ranks: data.ranks.slice(0, kept),
    wordScales,
    wordCodes,
    ngramScales,
    ngramCodes,
    buildTag,
  };
}
