import { describe, expect, it } from 'vitest';
import { type CompactVectors, decodeVectorsFile, encodeVectorsFile } from './vectors-file-format.js';

function sample(): CompactVectors {
  return {
    dimensions: 3,
    sourceVocabularySize: 10,
    words: ['the', 'café', '🚀'],
    ranks: Uint32Array.from([0, 4, 9]),
    wordScales: Float32Array.from([0.5, 0.25, 1]),
    wordCodes: Int8Array.from([1, -2, 3, 4, -5, 6, 127, -127, 0]),
    ngramScales: Float32Array.from([0.125, 2]),
    ngramCodes: Int8Array.from([9, 8, 7, -6, -5, -4]),
    buildTag: 'test tag ✓',
  };
}

describe('vectors file format', () => {
  it('round-trips every field', () => {
    const decoded = decodeVectorsFile(encodeVectorsFile(sample()));
    const expected = sample();
    expect(decoded.words).toEqual(expected.words);
    expect(decoded.buildTag).toBe(expected.buildTag);
    expect(decoded.dimensions).toBe(3);
    expect(decoded.sourceVocabularySize).toBe(10);
    expect(Array.from(decoded.ranks)).toEqual(Array.from(expected.ranks));
    expect(Array.from(decoded.wordScales)).toEqual(Array.from(expected.wordScales));
    expect(Array.from(decoded.wordCodes)).toEqual(Array.from(expected.wordCodes));
    expect(Array.from(decoded.ngramScales)).toEqual(Array.from(expected.ngramScales));
    expect(Array.from(decoded.ngramCodes)).toEqual(Array.from(expected.ngramCodes));
  });

  it('reads a file at an unaligned offset of a larger buffer', () => {
    const file = encodeVectorsFile(sample());
    const shifted = Buffer.alloc(file.length + 1);
    file.copy(shifted, 1);
    expect(decodeVectorsFile(shifted.subarray(1)).words).toEqual(sample().words);
  });

  it('rejects other files, other versions and truncated files', () => {
    const file = encodeVectorsFile(sample());
    expect(() => decodeVectorsFile(Buffer.from('{"json": true}'))).toThrow(/bad magic/);
    const otherVersion = Buffer.from(file);
    otherVersion.writeUInt32LE(99, 4);
    expect(() => decodeVectorsFile(otherVersion)).toThrow(/format version 99/);
    expect(() => decodeVectorsFile(file.subarray(0, file.length - 3))).toThrow(/expected/);
  });
});
