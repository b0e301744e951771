import type { Embedder, VectorHit } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import { ALIGNED_TEXT_CHARS, rankingsToFuse } from './candidate-alignment.js';

const hit = (id: string, text: string): VectorHit => ({ id, score: 0.5, row: { text } });
const base: Embedder = { id: 'test', dimensions: 2, embed: async () => [] };

describe('rankingsToFuse', () => {
  it('keeps the two legs apart for an embedder without word alignment', async () => {
    const vector = [hit('a', 'alpha'), hit('b', 'beta')];
    const lexical = [hit('b', 'beta'), hit('c', 'gamma')];
    expect(await rankingsToFuse(base, 'q', vector, lexical)).toEqual([vector, lexical]);
  });

  it('ranks every candidate of both legs once by alignment, equal scores in leg order', async () => {
    const asked: Array<{ query: string; texts: readonly string[] }> = [];
    const score: Record<string, number> = { alpha: 0.2, beta: 0.9, gamma: 0.2, delta: 0.5 };
    const embedder: Embedder = {
      ...base,
      async alignmentScores(options) {
        asked.push(options);
        return options.texts.map((text) => score[text] ?? 0);
      },
    };
    const vector = [hit('a', 'alpha'), hit('b', 'beta')];
    const lexical = [hit('c', 'gamma'), hit('b', 'beta'), hit('d', 'delta')];
    const [aligned, ...rest] = await rankingsToFuse(embedder, 'the question', vector, lexical);
    expect(rest).toEqual([]);
    expect(aligned?.map((candidate) => candidate.id)).toEqual(['b', 'd', 'a', 'c']);
    expect(asked).toEqual([{ query: 'the question', texts: ['alpha', 'beta', 'gamma', 'delta'] }]);
    expect(await rankingsToFuse(embedder, 'q', [], [])).toEqual([]);
  });

  it(`reads the first ${ALIGNED_TEXT_CHARS} characters of a candidate`, async () => {
    let lengths: number[] = [];
    const embedder: Embedder = {
      ...base,
      async alignmentScores({ texts }) {
        lengths = texts.map((text) => text.length);
        return texts.map(() => 0);
      },
    };
    await rankingsToFuse(embedder, 'q', [hit('a', 'x'.repeat(100_000))], []);
    expect(lengths).toEqual([ALIGNED_TEXT_CHARS]);
  });
});
