export { type CommonComponents, fitCommonComponents } from './build/common-components.js';
export { CHAR_NGRAM_MAX, CHAR_NGRAM_MIN, charNgramBuckets } from './char-ngrams.js';
export { createCompactVectorTable } from './compact-vector-table.js';
export { type CompactionParameters, compactionTag, DEFAULT_COMPACTION } from './compaction-parameters.js';
export { defaultVectorsFile } from './default-vectors-file.js';
export { createFloatVectorTable, type FloatVectorTableData } from './float-vector-table.js';
export { addDequantized, quantizeInt8 } from './int8-quantization.js';
export {
  createSentenceEncoder,
  type EncodingSteps,
  type SentenceEncoder,
  type SentenceEncoderOptions,
  sifWeights,
  TOKENIZE_PIECE_LENGTH,
} from './sentence-encoder.js';
export { createSpellingCorrector, MAX_CORRECTED_LENGTH, type SpellingCorrector } from './spelling-correction.js';
export { createStepRunner, type StepRunner, type StepRunnerOptions } from './step-runner.js';
export { isToken, tokenize, tokenizeInPieces } from './text-tokens.js';
export {
  type CompactVectors,
  decodeVectorsFile,
  encodeVectorsFile,
  VECTORS_FILE_VERSION,
} from './vectors-file-format.js';
export { type AlignmentSteps, createWordAligner, type WordAligner, type WordAlignerOptions } from './word-alignment.js';
export type { WordVectorLookup } from './word-vector-lookup.js';
export {
  createWordVectorEmbedder,
  DEFAULT_VOCABULARY_SIZE,
  WORDVEC_ENCODER_OPTIONS,
  type WordVectorEmbedder,
  type WordVectorEmbedderOptions,
} from './wordvec-embedder.js';
