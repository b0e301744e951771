/**
 * Read access to a table of word vectors and hashed character n-gram vectors,
 * whatever their storage (int8 file, float32 arrays). Indexes are positions in
 * the table, 0-based, ordered from the most to the least frequent word.
 */
export interface WordVectorLookup {
  /** Length of every vector. */
  readonly dimensions: number;
  /** Words the table answers for (indexes `0 .. vocabularySize - 1`). */
  readonly vocabularySize: number;
  /** Size of the vocabulary the frequency ranks refer to (the source model's, e.g. 341,479). */
  readonly sourceVocabularySize: number;
  /** Number of n-gram hash buckets; 0 when the table has no n-gram vectors. */
  readonly ngramBucketCount: number;
  /** @returns the word at `index` (0 ≤ index < vocabularySize). */
  wordAt(index: number): string;
  /** @returns the index of `word`, or -1 when it is not in the table. */
  indexOf(word: string): number;
  /** @returns the 0-based frequency rank of the word at `index` in the source vocabulary. */
  rankOf(index: number): number;
  /** Adds `weight` times the vector of the word at `index` into `target`. */
  addWordVector(index: number, weight: number, target: Float32Array): void;
  /** Adds `weight` times the vector of n-gram bucket `bucket` into `target`. */
  addNgramVector(bucket: number, weight: number, target: Float32Array): void;
}
