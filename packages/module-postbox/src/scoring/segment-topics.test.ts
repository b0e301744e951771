import { describe, expect, it } from 'vitest';
import { decodeTopicTable, encodeTopicVectors } from './injection-model.js';
import { findPhrases } from './instruction-phrasing.js';
import { createSegmentReader, segmentBuckets } from './segment-features.js';
import { createTopicTable, TOPIC_MAX_SEGMENTS, topicCounter } from './segment-topics.js';
import { forEachNgram, NGRAM_KIND, namedFeatureHash, wordUnigramHash } from './text-ngrams.js';

const MASK = 2 ** 18 - 1;
const bucket = (name: string) => namedFeatureHash(name) & MASK;

/** Two topics in two dimensions: billing words along x, geography words along y. */
const WORDS: Record<string, [number, number]> = {
  invoice: [1, 0],
  payment: [1, 0.1],
  card: [0.9, 0],
  charged: [1, 0.05],
  capital: [0, 1],
  brazil: [0.05, 1],
};
/** The unigram hash of a single word (the tests only pass single words). */
const hashOf = (word: string): number => {
  const hash = wordUnigramHash(word);
  if (hash === null) throw new Error(`"${word}" is not one word`);
  return hash;
};

const table = createTopicTable(Uint32Array.from(Object.keys(WORDS).map(hashOf)), Float32Array.from(Object.values(WORDS).flat()), 2);

describe('wordUnigramHash', () => {
  it('is the hash the n-gram pass gives the word, and null for what it does not read as one word', () => {
    const seen: number[] = [];
    forEachNgram(
      "invoice don't",
      (hash, kind) => kind === NGRAM_KIND.word && seen.push(hash),
      () => {},
    );
    expect(seen).toEqual([wordUnigramHash('invoice'), wordUnigramHash("don't")]);
    expect([wordUnigramHash('u.s.'), wordUnigramHash('—'), wordUnigramHash('')]).toEqual([null, null, null]);
  });
});

describe('topic features (segment-topics.ts)', () => {
  const mail = 'the invoice was charged. the payment card was charged. the invoice payment is due. what is the capital of brazil?';

  it('puts an off-topic segment in the lowest bin and the on-topic ones in the highest, cued when an instruction ends there', () => {
    const segments = segmentBuckets(createSegmentReader(18, table), [{ text: mail, matches: findPhrases(mail).matches }]);
    expect(segments).toHaveLength(4);
    for (const segment of segments.slice(0, 3)) expect(segment).toContain(bucket('topic:3'));
    expect(segments[3]).toContain(bucket('topic:0'));
    expect(segments[3]).toContain(bucket('topic:0:cued'));
    expect(segments[0]).not.toContain(bucket('topic:3:cued'));
  });

  it('gives no topic feature without a table, in a text of fewer than three topical segments, or to a segment with no known word', () => {
    const plain = segmentBuckets(createSegmentReader(18, null), [{ text: mail, matches: [] }]);
    const named = new Set([0, 1, 2, 3].flatMap((bin) => [bucket(`topic:${bin}`), bucket(`topic:${bin}:cued`)]));
    expect(plain.flatMap((segment) => [...segment]).filter((value) => named.has(value))).toEqual([]);
    const short = segmentBuckets(createSegmentReader(18, table), [{ text: 'the invoice. the capital of brazil?', matches: [] }]);
    expect(short.flatMap((segment) => [...segment]).filter((value) => named.has(value))).toEqual([]);
    const unknown = segmentBuckets(createSegmentReader(18, table), [{ text: `${mail} hello there.`, matches: [] }]);
    expect([...(unknown[4] ?? [])].filter((value) => named.has(value))).toEqual([]);
  });

  it(`reads only the first ${TOPIC_MAX_SEGMENTS} segments`, () => {
    const counter = topicCounter(table, MASK);
    counter.reset();
    for (let k = 0; k < TOPIC_MAX_SEGMENTS + 10; k += 1) {
      counter.word(hashOf(k % 2 === 0 ? 'invoice' : 'payment'));
      counter.endSegment();
    }
    expect(counter.features(0, false)).toEqual([bucket('topic:3')]);
    expect(counter.features(TOPIC_MAX_SEGMENTS + 1, false)).toEqual([]);
  });

  it('survives the model file: quantised per word, found by hash; a broken table is refused', () => {
    const hashes = Uint32Array.from([hashOf('invoice'), hashOf('brazil')]);
    const decoded = decodeTopicTable(encodeTopicVectors({ hashes, vectors: Float32Array.from([1, -0.5, 0.02, 3]), dimensions: 2 }));
    expect(decoded?.rowOf(hashOf('brazil'))).toBe(1);
    expect(decoded?.rowOf(hashOf('card'))).toBe(-1);
    expect([...(decoded?.vectors ?? [])].map((value) => Math.round(value * 100) / 100)).toEqual([1, -0.5, 0.02, 3]);
    expect(() => createTopicTable(Uint32Array.from([1, 1]), new Float32Array(4), 2)).toThrow(/twice/);
    expect(() => createTopicTable(Uint32Array.from([0x80000000]), new Float32Array(2), 2)).toThrow(/over 31 bits/);
    expect(() => createTopicTable(Uint32Array.from([1]), Float32Array.from([0, Number.NaN]), 2)).toThrow(/finite/);
    expect(() => createTopicTable(Uint32Array.from([1]), new Float32Array(3), 2)).toThrow(/different number/);
    const good = encodeTopicVectors({ hashes, vectors: Float32Array.from([1, -0.5, 0.02, 3]), dimensions: 2 });
    const nanScale = Buffer.from(good.scales, 'base64');
    nanScale.writeFloatLE(Number.NaN, 0);
    expect(() => decodeTopicTable({ ...good, scales: nanScale.toString('base64') })).toThrow(/finite/);
    expect(() => decodeTopicTable({ ...good, values: Buffer.alloc(3).toString('base64') })).toThrow(/different lengths/);
  });
});
