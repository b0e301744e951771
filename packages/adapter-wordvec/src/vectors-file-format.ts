/**
 * The compact vectors file (`*.wv8`), little-endian, every section 4-byte aligned:
 *
 * | bytes | content |
 * |---|---|
 * | 0–3 | magic `AIWV` |
 * | 4–7 | u32 format version ({@link VECTORS_FILE_VERSION}) |
 * | 8–11 | u32 dimensions `D` |
 * | 12–15 | u32 words `N` |
 * | 16–19 | u32 n-gram buckets `B` |
 * | 20–23 | u32 source vocabulary size (for the frequency estimate) |
 * | 24–27 | u32 byte length `L` of the word list |
 * | 28–31 | u32 byte length `T` of the build tag |
 * | 32… | u32 source rank × N, f32 word scale × N, f32 bucket scale × B, i8 word codes × N·D, i8 bucket codes × B·D (each section padded to 4 bytes), UTF-8 words joined by `\n` (L bytes), UTF-8 build tag (T bytes) |
 *
 * Values are int8 codes with one scale per vector (see `quantizeInt8`).
 */
export const VECTORS_FILE_VERSION = 1;
const MAGIC = 'AIWV';
const HEADER_BYTES = 32;

/** The content of a vectors file; the typed arrays of a decoded file are views on its buffer. */
export interface CompactVectors {
  dimensions: number;
  sourceVocabularySize: number;
  /** Words, most frequent first. */
  words: string[];
  /** Source frequency rank of each word. */
  ranks: Uint32Array;
  /** Scale of each word's codes. */
  wordScales: Float32Array;
  /** `words.length × dimensions` int8 codes. */
  wordCodes: Int8Array;
  /** Scale of each bucket's codes. */
  ngramScales: Float32Array;
  /** `bucketCount × dimensions` int8 codes. */
  ngramCodes: Int8Array;
  /** Free text naming how the file was built (source, post-processing, parameters). */
  buildTag: string;
}

const padded = (bytes: number): number => Math.ceil(bytes / 4) * 4;

/** Serialises `vectors` into the file layout above. */
export function encodeVectorsFile(vectors: CompactVectors): Buffer {
  const count = vectors.words.length;
  const buckets = vectors.ngramScales.length;
  const wordList = Buffer.from(vectors.words.join('\n'), 'utf8');
  const tag = Buffer.from(vectors.buildTag, 'utf8');
  const sizes = [count * 4, count * 4, buckets * 4, count * vectors.dimensions, buckets * vectors.dimensions];
  const total = HEADER_BYTES + sizes.reduce((sum, size) => sum + padded(size), 0) + wordList.length + tag.length;
  const file = Buffer.alloc(total);
  file.write(MAGIC, 0, 'latin1');
  const header = [VECTORS_FILE_VERSION, vectors.dimensions, count, buckets, vectors.sourceVocabularySize, wordList.length, tag.length];
  let offset = 4;
  for (const value of header) offset = file.writeUInt32LE(value, offset);
  offset = HEADER_BYTES;
  for (const rank of vectors.ranks) offset = file.writeUInt32LE(rank, offset);
  offset = HEADER_BYTES + padded(count * 4);
  for (const scale of vectors.wordScales) offset = file.writeFloatLE(scale, offset);
  offset = HEADER_BYTES + padded(count * 4) * 2;
  for (const scale of vectors.ngramScales) offset = file.writeFloatLE(scale, offset);
  offset = HEADER_BYTES + padded(count * 4) * 2 + padded(buckets * 4);
  file.set(new Uint8Array(vectors.wordCodes.buffer, vectors.wordCodes.byteOffset, vectors.wordCodes.length), offset);
  offset += padded(count * vectors.dimensions);
  file.set(new Uint8Array(vectors.ngramCodes.buffer, vectors.ngramCodes.byteOffset, vectors.ngramCodes.length), offset);
  offset += padded(buckets * vectors.dimensions);
  file.set(wordList, offset);
  file.set(tag, offset + wordList.length);
  return file;
}

/**
 * Reads a vectors file held in one buffer without copying the int8 codes.
 * @throws Error when the buffer is not a vectors file of this version or is truncated.
 */
export function decodeVectorsFile(file: Buffer): CompactVectors {
  if (file.length < HEADER_BYTES || file.toString('latin1', 0, 4) !== MAGIC) {
    throw new Error('not an agentinfra word vectors file (bad magic)');
  }
  const [version, dimensions, count, buckets, sourceVocabularySize, wordListBytes, tagBytes] = Array.from({ length: 7 }, (_, i) =>
    file.readUInt32LE(4 + i * 4),
  ) as [number, number, number, number, number, number, number];
  if (version !== VECTORS_FILE_VERSION) {
    throw new Error(`word vectors file has format version ${version}; this build reads version ${VECTORS_FILE_VERSION}`);
  }
  const sections = [count * 4, count * 4, buckets * 4, count * dimensions, buckets * dimensions];
  const expected = HEADER_BYTES + sections.reduce((sum, size) => sum + padded(size), 0) + wordListBytes + tagBytes;
  if (file.length !== expected) throw new Error(`word vectors file is ${file.length} bytes, expected ${expected}`);

  let offset = HEADER_BYTES;
  const ranks = Uint32Array.from({ length: count }, (_, i) => file.readUInt32LE(offset + i * 4));
  offset += padded(count * 4);
  const wordScales = Float32Array.from({ length: count }, (_, i) => file.readFloatLE(offset + i * 4));
  offset += padded(count * 4);
  const ngramScales = Float32Array.from({ length: buckets }, (_, i) => file.readFloatLE(offset + i * 4));
  offset += padded(buckets * 4);
  const wordCodes = new Int8Array(file.buffer, file.byteOffset + offset, count * dimensions);
  offset += padded(count * dimensions);
  const ngramCodes = new Int8Array(file.buffer, file.byteOffset + offset, buckets * dimensions);
  offset += padded(buckets * dimensions);
  const words = count === 0 ? [] : file.toString('utf8', offset, offset + wordListBytes).split('\n');
  if (words.length !== count) throw new Error(`word vectors file lists ${words.length} words, expected ${count}`);
  const buildTag = file.toString('utf8', offset + wordListBytes, offset + wordListBytes + tagBytes);
  return { dimensions, sourceVocabularySize, words, ranks, wordScales, wordCodes, ngramScales, ngramCodes, buildTag };
}
