import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEmbedderContract } from '@agentinfra/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVectorsFile, isVectorsFileCurrent } from './build/vectors-file-build.js';
import { readWinkEmbeddings } from './build/wink-embeddings-reader.js';
import { createCompactVectorTable } from './compact-vector-table.js';
import { defaultVectorsFile } from './default-vectors-file.js';
import { addDequantized, quantizeInt8 } from './int8-quantization.js';
import { isToken } from './text-tokens.js';
import { decodeVectorsFile, encodeVectorsFile } from './vectors-file-format.js';
import { createWordVectorEmbedder } from './wordvec-embedder.js';

// `pnpm install` builds the file (the package's `prepare`); build it here too when it is missing or stale.
beforeAll(async () => {
  if (!(await isVectorsFileCurrent(defaultVectorsFile()))) await buildVectorsFile({ output: defaultVectorsFile() });
}, 300_000);

function dot(a: Float32Array | undefined, b: Float32Array | undefined): number {
  if (a === undefined || b === undefined) throw new Error('missing vector');
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

runEmbedderContract({ name: 'wordvec (compact int8)', create: () => createWordVectorEmbedder() });

describe('createWordVectorEmbedder', () => {
  const embedder = createWordVectorEmbedder();
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'agentinfra-wordvec-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('names the variant in its id and validates its options', () => {
    expect(embedder.id).toBe('wordvec-sg100-q8-v1');
    expect(embedder.dimensions).toBe(100);
    expect(createWordVectorEmbedder({ vocabularySize: 50_000 }).id).toBe('wordvec-sg100-q8-v1-50000');
    expect(createWordVectorEmbedder({ vectorsFile: '/x.wv8', id: 'mine' }).id).toBe('mine');
    expect(() => createWordVectorEmbedder({ vocabularySize: 10 })).toThrow();
    expect(() => createWordVectorEmbedder({ vocabularySize: 1.5 })).toThrow();
    expect(() => createWordVectorEmbedder({ unknown: true } as never)).toThrow();
  });

  it('loads lazily, once, and warm() is idempotent', async () => {
    const fresh = createWordVectorEmbedder();
    await Promise.all([fresh.warm(), fresh.warm()]);
    await fresh.warm();
    const [vector] = await fresh.embed({ texts: ['hello'] });
    expect(vector).toHaveLength(100);
    await fresh.close?.();
  });

  it('gives the same vectors from two instances (determinism across loads)', async () => {
    const other = createWordVectorEmbedder();
    const texts = ['The nightly backup failed again.', 'recieve the pakage', 'paediatricians 🎉'];
    const [a, b] = [await embedder.embed({ texts }), await other.embed({ texts })];
    expect(a.map((vector) => Array.from(vector))).toEqual(b.map((vector) => Array.from(vector)));
  });

  it('reads misspelt frequent words as the word itself', async () => {
    const [typo, right] = await embedder.embed({ texts: ['recieve the pakage', 'receive the package'] });
    expect(dot(typo, right)).toBeGreaterThan(0.999);
  });

  it('places words outside the vocabulary near the words that share their spelling', async () => {
    const triples = [
      ['paediatricians', 'pediatrician', 'volcano'],
      ['orthodontists', 'dentist', 'election'],
      ['unhappiest', 'unhappy', 'airport'],
      ['microservices', 'services', 'kitten'],
    ];
    for (const [unknown, related, unrelated] of triples) {
      const [u, r, x] = await embedder.embed({ texts: [unknown ?? '', related ?? '', unrelated ?? ''] });
      expect(Math.abs(Math.hypot(...(u ?? [])) - 1)).toBeLessThan(1e-3);
      expect(dot(u, r), `${unknown} ~ ${related}`).toBeGreaterThan(dot(u, x) + 0.1);
    }
  });

  it('gives the zero vector to text without words and a vector to nonsense words', async () => {
    const [blank, punctuation, nonsense] = await embedder.embed({ texts: [' \n', '?!', 'zqxjvw'] });
    expect(Math.hypot(...(blank ?? []))).toBe(0);
    expect(Math.hypot(...(punctuation ?? []))).toBe(0);
    expect(Math.abs(Math.hypot(...(nonsense ?? [])) - 1)).toBeLessThan(1e-3);
  });

  // #11: /mem/query with one 16,000-letter token took 23 s and stalled every other request.
  it('embeds the worst texts we know within a generous deadline and lets other callbacks run meanwhile', async () => {
    const letters = 'qwxzjkvbpy';
    const distinct = (wordLength: number): string =>
      Array.from({ length: Math.ceil(32_768 / (wordLength + 1)) }, (_, i) =>
        Array.from({ length: wordLength }, (_, k) => letters.charAt(Math.floor(i / 10 ** (k % 5)) % 10)).join(''),
      ).join(' ');
    const hostile = ['a'.repeat(16_000), 'a'.repeat(32_768), distinct(6), distinct(24), 'x1y2 '.repeat(6_500)];
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const vectors = await embedder.embed({ texts: hostile });
    ticking = false;
    expect(vectors).toHaveLength(hostile.length);
    for (const vector of vectors) expect(Math.abs(Math.hypot(...vector) - 1)).toBeLessThan(1e-3);
    expect(turns).toBeGreaterThan(5);
  }, 10_000);

  it('uses only the first vocabularySize words when asked to', async () => {
    const small = createWordVectorEmbedder({ vocabularySize: 1_000 });
    const [rare] = await small.embed({ texts: ['pharmacist'] });
    const [full] = await embedder.embed({ texts: ['pharmacist'] });
    expect(dot(rare, full)).toBeLessThan(0.99);
    expect(dot(rare, full)).toBeGreaterThan(0);
  });

  it('explains a missing file, a foreign file and a file built with other parameters', async () => {
    const missing = createWordVectorEmbedder({ vectorsFile: join(scratch, 'none.wv8') });
    await expect(missing.embed({ texts: ['x'] })).rejects.toThrow(/cannot read word vectors file .*build:vectors/);

    const foreign = join(scratch, 'foreign.wv8');
    await writeFile(foreign, '{"not":"vectors"}');
    await expect(createWordVectorEmbedder({ vectorsFile: foreign }).warm()).rejects.toThrow(/bad magic/);

    const other = join(scratch, 'other.wv8');
    const vector = Float32Array.from({ length: 100 }, (_, i) => Math.sin(i));
    const wordCodes = new Int8Array(100);
    const wordScales = Float32Array.of(quantizeInt8(vector, wordCodes));
    await writeFile(
      other,
      encodeVectorsFile({
        dimensions: 100,
        sourceVocabularySize: 10,
        words: ['hello'],
        ranks: Uint32Array.of(0),
        wordScales,
        wordCodes,
        ngramScales: new Float32Array(0),
        ngramCodes: new Int8Array(0),
        buildTag: 'home-made',
      }),
    );
    await expect(createWordVectorEmbedder({ vectorsFile: other }).warm()).rejects.toThrow(/built with "home-made"/);
    await expect(createWordVectorEmbedder({ vectorsFile: other, id: 'home-made-v1' }).warm()).rejects.toThrow(
      /vocabularySize 100000 exceeds the 1 words/,
    );
    const custom = createWordVectorEmbedder({ vectorsFile: other, id: 'home-made-v1', vocabularySize: 1_000 });
    await expect(custom.warm()).rejects.toThrow(RangeError);
  });
});

describe('compact vectors file', () => {
  it('keeps the most frequent source words in order, int8 within half a step, neighbours intact', async () => {
    const compact = decodeVectorsFile(await readFile(defaultVectorsFile()));
    expect(compact.words).toHaveLength(100_000);
    expect(compact.ngramScales).toHaveLength(1 << 17);
    const raw = await readWinkEmbeddings({ keep: isToken, limit: 2_000 });
    expect(compact.words.slice(0, 2_000)).toEqual(raw.words);
    expect(Array.from(compact.ranks.slice(0, 2_000))).toEqual(Array.from(raw.ranks));

    // Round trip of real GloVe values through int8: every value within scale / 2, direction kept.
    const codes = new Int8Array(100);
    for (let row = 0; row < 2_000; row += 1) {
      const source = raw.vectors.subarray(row * 100, (row + 1) * 100);
      const scale = quantizeInt8(source, codes);
      const restored = new Float32Array(100);
      addDequantized(codes, 0, 100, scale, 1, restored);
      for (let i = 0; i < 100; i += 1) {
        expect(Math.abs((restored[i] ?? 0) - (source[i] ?? 0))).toBeLessThanOrEqual(scale / 2 + 1e-7);
      }
      expect(dot(restored, source) / Math.sqrt(dot(restored, restored) * dot(source, source))).toBeGreaterThan(0.999);
    }

    // After post-processing and quantisation, words keep their nearest neighbours.
    const table = createCompactVectorTable(compact, 2_000);
    const unit = (word: string): Float32Array => {
      const vector = new Float32Array(100);
      table.addWordVector(table.indexOf(word), 1, vector);
      const length = Math.sqrt(dot(vector, vector));
      return vector.map((value) => value / length);
    };
    const nearest = (word: string): string => {
      const target = unit(word);
      let best = '';
      let bestScore = -2;
      for (const other of compact.words.slice(0, 2_000)) {
        const score = other === word ? -2 : dot(target, unit(other));
        if (score > bestScore) [best, bestScore] = [other, score];
      }
      return best;
    };
    expect(['tuesday', 'wednesday', 'thursday', 'friday', 'sunday', 'saturday']).toContain(nearest('monday'));
    expect(['daughter', 'son', 'husband', 'mother', 'sister']).toContain(nearest('wife'));
  }, 60_000);
});
