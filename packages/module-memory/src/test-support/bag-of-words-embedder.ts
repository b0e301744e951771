import type { Embedder } from '@agentinfra/core';

/** Words that carry no meaning for the test corpus. */
const STOP_WORDS = new Set(
  'a an and are as at be by do does did for from has have how i in is it its of on or our s that the their this to was what when where which who why will with you your'.split(
    ' ',
  ),
);

/** A small synonym table: each word maps to the canonical word it is counted as. */
const SYNONYMS: Record<string, string> = {
  customer: 'user',
  client: 'user',
  like: 'prefer',
  likes: 'prefer',
  love: 'prefer',
  loves: 'prefer',
  prefers: 'prefer',
  ide: 'editor',
  theme: 'mode',
  colour: 'mode',
  color: 'mode',
  dark: 'night',
  ship: 'deploy',
  release: 'deploy',
  releases: 'deploy',
  payments: 'billing',
  invoices: 'billing',
  weekly: 'friday',
  meal: 'food',
  dish: 'food',
  eat: 'food',
  favourite: 'prefer',
  favorite: 'prefer',
};

/** FNV-1a 32-bit hash of a string. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A deterministic test embedder whose failures and calls a test can steer and observe. */
export interface BagOfWordsEmbedder extends Embedder {
  /** When set, `embed` rejects with this error. */
  failWith: Error | null;
  /** When set, `embed` rejects once this many calls have succeeded. */
  failAfterCalls: number | null;
  /** Successful `embed` calls so far. */
  calls: number;
  /** When set, `embed` waits for this before answering (a test holds an embedding in flight). */
  hold: Promise<void> | null;
}

/**
 * Hashed bag of words with stop words removed and a small synonym table, so
 * paraphrases that use the listed synonyms land close together. Unit-length
 * vectors; text with no counted word gives the zero vector.
 */
export function createBagOfWordsEmbedder(options: { id?: string; dimensions?: number } = {}): BagOfWordsEmbedder {
  const dimensions = options.dimensions ?? 256;
  const embedOne = (text: string): Float32Array => {
    const vector = new Float32Array(dimensions);
    for (const raw of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
      if (STOP_WORDS.has(raw)) continue;
      const word = SYNONYMS[raw] ?? raw;
      const hash = fnv1a(word);
      vector[hash % dimensions] = (vector[hash % dimensions] ?? 0) + (hash >>> 31 === 1 ? -1 : 1);
    }
    let norm = 0;
    for (const value of vector) norm += value * value;
    if (norm > 0) {
      const scale = 1 / Math.sqrt(norm);
      for (let i = 0; i < dimensions; i += 1) vector[i] = (vector[i] ?? 0) * scale;
    }
    return vector;
  };
  const embedder: BagOfWordsEmbedder = {
    id: options.id ?? `test-bow-${dimensions}-v1`,
    dimensions,
    failWith: null,
    failAfterCalls: null,
    calls: 0,
    hold: null,
    async embed({ texts }) {
      if (embedder.hold) await embedder.hold;
      if (embedder.failWith) throw embedder.failWith;
      if (embedder.failAfterCalls !== null && embedder.calls >= embedder.failAfterCalls) throw new Error('test embedder: planned failure');
      embedder.calls += 1;
      return texts.map(embedOne);
    },
  };
  return embedder;
}
