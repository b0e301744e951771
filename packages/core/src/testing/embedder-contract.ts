import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../ports/embedder.js';

/** What an {@link Embedder} under test can do; the suite skips the tests a missing capability rules out. */
export interface EmbedderContractCapabilities {
  /**
   * The embedder captures meaning: paraphrases with few shared words score
   * closer than unrelated sentences. Default `true`; `false` for stand-in
   * models (a test server returning hashed vectors) that only see shared words.
   */
  semantic?: boolean;
}

/** Options of {@link runEmbedderContract}. */
export interface EmbedderContractOptions {
  /** Name of the implementation, shown in the test titles. */
  name: string;
  /** The embedder to test; called once for the whole suite, its `close()` (if any) runs after it. */
  create: () => Embedder | Promise<Embedder>;
  capabilities?: EmbedderContractCapabilities;
}

/** Largest difference allowed between two embeddings of the same text (remote models may not be bit-exact). */
const SAME_VECTOR_TOLERANCE = 1e-5;
/** Allowed deviation of a returned vector's L2 norm from 1. */
const NORM_TOLERANCE = 1e-3;

function norm(vector: Float32Array): number {
  let sum = 0;
  for (const value of vector) sum += value * value;
  return Math.sqrt(sum);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

function maxDifference(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i += 1) max = Math.max(max, Math.abs((a[i] ?? 0) - (b[i] ?? 0)));
  return max;
}

function at<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new Error(`expected an item at index ${index} of ${items.length}`);
  return item;
}

/** Sentences sharing some words: `[anchor, close, unrelated]`. Any embedder, even bag-of-words, ranks these. */
const LEXICAL_TRIPLES: readonly (readonly [string, string, string])[] = [
  ['The backup job runs every night at two.', 'Every night the database backup job starts.', 'She prefers green tea without sugar.'],
  ['Priya is allergic to peanuts.', 'Remember that Priya has a peanut allergy.', 'Deploy the release after the tests pass.'],
];

/** Paraphrases with (almost) no shared words: `[anchor, close, unrelated]`. Needs an embedder that knows meaning. */
const SEMANTIC_TRIPLES: readonly (readonly [string, string, string])[] = [
  ['The cat sat on the mat.', 'A kitten was resting on the rug.', 'Interest rates rose sharply this quarter.'],
  ['The server crashed during the night.', 'Our machine went down overnight.', 'She bought fresh vegetables and fruit.'],
  ['He loves eating pizza.', 'Italian food is his favourite meal.', 'The train to Berlin was delayed.'],
  ['Rotate the database password.', 'Change the credentials for PostgreSQL.', 'My daughter plays the violin.'],
];

/**
 * The behaviour every {@link Embedder} guarantees (vitest `describe`/`it`):
 * an id and a positive integer dimension; one `Float32Array` of `dimensions`
 * finite numbers per text, in input order; unit L2 norm for text and the zero
 * vector for `''`; the same text always gives the same vector, alone or inside
 * a batch; an empty batch gives `[]`; related sentences score higher (dot
 * product) than unrelated ones; unicode, emoji and a 10,000-word text embed
 * without throwing.
 */
export function runEmbedderContract(options: EmbedderContractOptions): void {
  const semantic = options.capabilities?.semantic ?? true;
  let embedder: Embedder;

  async function embedOne(text: string): Promise<Float32Array> {
    const [vector] = await embedder.embed({ texts: [text] });
    if (vector === undefined) throw new Error('embed returned no vector for one text');
    return vector;
  }

  function expectShape(vectors: Float32Array[], count: number): void {
    expect(vectors).toHaveLength(count);
    for (const vector of vectors) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector).toHaveLength(embedder.dimensions);
      for (const value of vector) expect(Number.isFinite(value)).toBe(true);
    }
  }

  function expectUnitOrZero(vector: Float32Array): void {
    const length = norm(vector);
    if (length !== 0) expect(Math.abs(length - 1)).toBeLessThan(NORM_TOLERANCE);
  }

  function expectRanking(triples: readonly (readonly [string, string, string])[]): Promise<void>[] {
    return triples.map(async ([anchor, close, unrelated]) => {
      const [a, c, u] = await embedder.embed({ texts: [anchor, close, unrelated] });
      if (a === undefined || c === undefined || u === undefined) throw new Error('embed returned too few vectors');
      expect(dot(a, c), `"${anchor}" should be closer to "${close}" than to "${unrelated}"`).toBeGreaterThan(dot(a, u));
    });
  }

  describe(`Embedder contract: ${options.name}`, () => {
    beforeAll(async () => {
      embedder = await options.create();
    });
    afterAll(async () => {
      await embedder?.close?.();
    });

    it('has a non-empty id and a positive integer dimension', () => {
      expect(typeof embedder.id).toBe('string');
      expect(embedder.id.length).toBeGreaterThan(0);
      expect(Number.isInteger(embedder.dimensions)).toBe(true);
      expect(embedder.dimensions).toBeGreaterThan(0);
    });

    it('returns one unit-length vector of `dimensions` numbers per text', async () => {
      const texts = ['Hello world.', 'The deployment failed because the disk was full.', 'tea'];
      const vectors = await embedder.embed({ texts });
      expectShape(vectors, texts.length);
      for (const vector of vectors) expect(Math.abs(norm(vector) - 1)).toBeLessThan(NORM_TOLERANCE);
    });

    it('returns the zero vector for an empty text and [] for an empty batch', async () => {
      const vectors = await embedder.embed({ texts: ['', 'not empty', ''] });
      expectShape(vectors, 3);
      expect(norm(at(vectors, 0))).toBe(0);
      expect(Math.abs(norm(at(vectors, 1)) - 1)).toBeLessThan(NORM_TOLERANCE);
      expect(norm(at(vectors, 2))).toBe(0);
      expect(await embedder.embed({ texts: [] })).toEqual([]);
    });

    it('is deterministic', async () => {
      const text = 'The user prefers short answers in bullet points.';
      const first = await embedOne(text);
      const second = await embedOne(text);
      expect(maxDifference(first, second)).toBeLessThanOrEqual(SAME_VECTOR_TOLERANCE);
    });

    it('gives the same vectors in a batch as one at a time, in input order', async () => {
      const texts = ['Renew the TLS certificate.', 'Buy dog food.', 'Python is her favourite language.', 'ok'];
      const batch = await embedder.embed({ texts });
      const reversed = await embedder.embed({ texts: [...texts].reverse() });
      expectShape(batch, texts.length);
      for (let i = 0; i < texts.length; i += 1) {
        const alone = await embedOne(at(texts, i));
        expect(maxDifference(at(batch, i), alone)).toBeLessThanOrEqual(SAME_VECTOR_TOLERANCE);
        expect(maxDifference(at(batch, i), at(reversed, texts.length - 1 - i))).toBeLessThanOrEqual(SAME_VECTOR_TOLERANCE);
      }
    });

    it('answers concurrent calls independently', async () => {
      const texts = ['alpha release notes', 'weekly status update', 'kitchen tap is leaking'];
      const sequential = [];
      for (const text of texts) sequential.push(await embedOne(text));
      const concurrent = await Promise.all(texts.map((text) => embedOne(text)));
      for (let i = 0; i < texts.length; i += 1) {
        expect(maxDifference(at(sequential, i), at(concurrent, i))).toBeLessThanOrEqual(SAME_VECTOR_TOLERANCE);
      }
    });

    it('scores sentences sharing words closer than unrelated ones', async () => {
      await Promise.all(expectRanking(LEXICAL_TRIPLES));
    });

    it.skipIf(!semantic)('scores paraphrases closer than unrelated sentences', async () => {
      await Promise.all(expectRanking(SEMANTIC_TRIPLES));
    });

    it('embeds unicode, emoji and a 10,000-word text without throwing', async () => {
      const long = Array.from({ length: 10_000 }, (_, i) => `word${i % 97} memory`).join(' ');
      const texts = [
        'Café déjà vu — naïve façade, Zürich, São Paulo.',
        '日本語のテキストと中文文本',
        'Привет, мир! Γειά σου κόσμε. مرحبا بالعالم',
        '🎉🚀 ship it 👍🏽',
        '🤖',
        '   \n\t  ',
        'a\u0000b\uFFFDc\uD800',
        long,
      ];
      const vectors = await embedder.embed({ texts });
      expectShape(vectors, texts.length);
      for (const vector of vectors) expectUnitOrZero(vector);
      expect(Math.abs(norm(at(vectors, 0)) - 1)).toBeLessThan(NORM_TOLERANCE);
      expect(Math.abs(norm(at(vectors, texts.length - 1)) - 1)).toBeLessThan(NORM_TOLERANCE);
    });
  });
}
