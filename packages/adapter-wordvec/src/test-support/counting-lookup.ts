import type { WordVectorLookup } from '../word-vector-lookup.js';

/** A {@link WordVectorLookup} that counts the word look-ups and vector additions made through it. */
export interface CountingLookup extends WordVectorLookup {
  /** `indexOf` calls so far. */
  lookups(): number;
  /** `addWordVector` and `addNgramVector` calls so far. */
  additions(): number;
}

/** Wraps `table` to count the work done on it (tests that bound the encoder's work without timing it). */
export function countingLookup(table: WordVectorLookup): CountingLookup {
  let lookups = 0;
  let additions = 0;
  return {
    dimensions: table.dimensions,
    vocabularySize: table.vocabularySize,
    sourceVocabularySize: table.sourceVocabularySize,
    ngramBucketCount: table.ngramBucketCount,
    wordAt: (index) => table.wordAt(index),
    indexOf: (word) => {
      lookups += 1;
      return table.indexOf(word);
    },
    rankOf: (index) => table.rankOf(index),
    addWordVector: (index, weight, target) => {
      additions += 1;
      table.addWordVector(index, weight, target);
    },
    addNgramVector: (bucket, weight, target) => {
      additions += 1;
      table.addNgramVector(bucket, weight, target);
    },
    lookups: () => lookups,
    additions: () => additions,
  };
}
