import { namedFeatureHash } from './text-ngrams.js';

/**
 * How far a segment's topic is from the rest of its text. An instruction
 * slipped into a mail ("What is the capital of Brazil?", "Write a poem about
 * the sea") is usually about something else than the mail, even when it
 * shares no word with it and none of its words is new to the mail (what
 * `segment-novelty.ts` counts). Each segment's topic is the sum of its
 * distinct words' topic vectors (word vectors cut to their main principal
 * directions, weighted by rarity, carried in the model file); its cosine
 * similarity with the sum of the other segments' unit topics becomes one of
 * `TOPIC_BIN_EDGES.length + 1` `topic:<bin>` features, and `topic:<bin>:cued`
 * when an instruction phrase ends in the segment. Texts with fewer than
 * {@link TOPIC_MIN_SEGMENTS} segments that have a topic get none (a short
 * text has no rest to compare with). Only a text's first
 * {@link TOPIC_MAX_SEGMENTS} segments are read for topics, so that the cost
 * stays bounded on texts of thousands of short lines.
 */

/** Cosine similarities below each edge fall in the bins before it: `[-1, 0.15)`, `[0.15, 0.3)`, `[0.3, 0.45)`, `[0.45, 1]`. */
export const TOPIC_BIN_EDGES: readonly number[] = [0.15, 0.3, 0.45];
/** Segments with a topic a text needs before any segment gets a topic feature. */
export const TOPIC_MIN_SEGMENTS = 3;
/**
 * Segments of a text read for topics (the first ones): ordinary mail has far
 * fewer, and 2,000 one-line segments cost 0.5 ms more to score without this
 * bound (bench/injection-eval.ts).
 */
export const TOPIC_MAX_SEGMENTS = 256;

/** Word topic vectors by word hash: the rows of the model's topic table. */
export interface TopicTable {
  /** Length of every topic vector. */
  readonly dimensions: number;
  /** The unigram hash (`text-ngrams.ts`, word kind: 31 bits) of each row's word. */
  readonly hashes: Uint32Array;
  /** Row-major topic vectors, `dimensions` per word. */
  readonly vectors: Float32Array;
  /** The row of the word whose unigram hash is `hash`, or −1. */
  rowOf(hash: number): number;
}

/** Largest word hash: the n-gram pass makes 31-bit hashes (`text-ngrams.ts`). */
const MAX_WORD_HASH = 0x7fffffff;

/**
 * A {@link TopicTable} over `hashes[row]` → row `row` of `vectors`, found by
 * open addressing in a power-of-two table at most half full (8 bytes per slot).
 * @throws Error when the arrays do not match, a hash is over 31 bits or
 *   repeats, or a value is not finite (a model file is not trusted blindly).
 */
export function createTopicTable(hashes: Uint32Array, vectors: Float32Array, dimensions: number): TopicTable {
  if (vectors.length !== hashes.length * dimensions) throw new Error('The topic table has a different number of words and vectors.');
  if (!vectors.every(Number.isFinite)) throw new Error('The topic table has a value that is not a finite number.');
  let size = 16;
  while (size < hashes.length * 2) size *= 2;
  const mask = size - 1;
  const keys = new Int32Array(size).fill(-1);
  const rows = new Int32Array(size);
  hashes.forEach((hash, row) => {
    if (hash > MAX_WORD_HASH) throw new Error('The topic table has a word hash over 31 bits.');
    let slot = hash & mask;
    while (keys[slot] !== -1) {
      if (keys[slot] === hash) throw new Error('The topic table has a word hash twice.');
      slot = (slot + 1) & mask;
    }
    keys[slot] = hash;
    rows[slot] = row;
  });
  return {
    dimensions,
    hashes,
    vectors,
    rowOf(hash) {
      let slot = hash & mask;
      for (;;) {
        const key = keys[slot] ?? -1;
        if (key === hash) return rows[slot] ?? -1;
        if (key === -1) return -1;
        slot = (slot + 1) & mask;
      }
    },
  };
}

/** Sums each segment's topic while a text is read, then names each segment's topic feature buckets. */
export interface TopicCounter {
  /** Forgets the previous text. */
  reset(): void;
  /** A distinct word of the current segment, by its unigram hash. */
  word(hash: number): void;
  /** The current segment ended. */
  endSegment(): void;
  /** After the last segment: the topic feature buckets of segment `index` (none when it or the text has too little topic). */
  features(index: number, cued: boolean): readonly number[];
}

/** A {@link TopicCounter} on `table`, for a feature table with index mask `mask`. */
export function topicCounter(table: TopicTable, mask: number): TopicCounter {
  const { dimensions, vectors } = table;
  const bucket = (name: string) => namedFeatureHash(name) & mask;
  const buckets = Array.from({ length: TOPIC_BIN_EDGES.length + 1 }, (_, bin) => [
    [bucket(`topic:${bin}`)],
    [bucket(`topic:${bin}`), bucket(`topic:${bin}:cued`)],
  ]);
  const none: readonly number[] = [];
  const sums = new Float64Array(TOPIC_MAX_SEGMENTS * dimensions);
  const norms = new Float64Array(TOPIC_MAX_SEGMENTS);
  const current = new Float64Array(dimensions);
  const total = new Float64Array(dimensions);
  let segments = 0;
  let withTopic = 0;
  let totalReady = false;
  return {
    reset: () => {
      segments = 0;
      withTopic = 0;
      totalReady = false;
      current.fill(0);
    },
    word: (hash) => {
      if (segments >= TOPIC_MAX_SEGMENTS) return;
      const row = table.rowOf(hash);
      if (row < 0) return;
      const from = row * dimensions;
      for (let d = 0; d < dimensions; d += 1) current[d] = (current[d] ?? 0) + (vectors[from + d] ?? 0);
    },
    endSegment: () => {
      if (segments >= TOPIC_MAX_SEGMENTS) return;
      let squares = 0;
      for (let d = 0; d < dimensions; d += 1) squares += (current[d] ?? 0) ** 2;
      const norm = Math.sqrt(squares);
      norms[segments] = norm;
      const from = segments * dimensions;
      for (let d = 0; d < dimensions; d += 1) {
        sums[from + d] = norm === 0 ? 0 : (current[d] ?? 0) / norm;
        current[d] = 0;
      }
      if (norm > 0) withTopic += 1;
      segments += 1;
    },
    features: (index, cued) => {
      if (withTopic < TOPIC_MIN_SEGMENTS || index >= segments || norms[index] === 0) return none;
      if (!totalReady) {
        total.fill(0);
        for (let k = 0; k < segments; k += 1) {
          const from = k * dimensions;
          for (let d = 0; d < dimensions; d += 1) total[d] = (total[d] ?? 0) + (sums[from + d] ?? 0);
        }
        totalReady = true;
      }
      const from = index * dimensions;
      let dot = 0;
      let squares = 0;
      for (let d = 0; d < dimensions; d += 1) {
        const own = sums[from + d] ?? 0;
        const rest = (total[d] ?? 0) - own;
        dot += own * rest;
        squares += rest * rest;
      }
      const similarity = squares === 0 ? 0 : dot / Math.sqrt(squares);
      let bin = 0;
      while (bin < TOPIC_BIN_EDGES.length && similarity >= (TOPIC_BIN_EDGES[bin] ?? 1)) bin += 1;
      return buckets[bin]?.[cued ? 1 : 0] ?? none;
    },
  };
}
