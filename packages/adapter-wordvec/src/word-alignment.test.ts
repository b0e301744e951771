import { describe, expect, it } from 'vitest';
import { createWordVectorEmbedder } from './wordvec-embedder.js';

const embedder = createWordVectorEmbedder();

describe('word alignment scores of the word-vector embedder', () => {
  it('ranks a paraphrase above unrelated texts, where the averaged vectors do not', async () => {
    const query = 'Are there foods that could give her an allergic reaction?';
    const texts = [
      'The user is allergic to peanuts and shellfish.',
      'The user prefers tea over coffee in the morning.',
      'Deploys happen on Tuesdays.',
    ];
    const scores = await embedder.alignmentScores({ query, texts });
    expect(scores).toHaveLength(3);
    expect(scores[0]).toBeGreaterThan(Math.max(scores[1] ?? 0, scores[2] ?? 0));
    for (const score of scores) {
      expect(score).toBeGreaterThanOrEqual(-1);
      expect(score).toBeLessThanOrEqual(1);
    }
  });

  it('scores a text against itself 1, and 0 when either side has no word with a vector', async () => {
    const [same, none, empty] = await embedder.alignmentScores({
      query: 'quarterly budget review',
      texts: ['quarterly budget review', '?!…', ''],
    });
    expect(same).toBeCloseTo(1, 5);
    expect([none, empty]).toEqual([0, 0]);
    expect(await embedder.alignmentScores({ query: 'the of and', texts: ['budget'] })).toEqual([0]);
    expect(await embedder.alignmentScores({ query: 'budget', texts: [] })).toEqual([]);
  });

  it('matches a word with no vector and no correction (an identifier) only with the same word', async () => {
    const texts = ['Deploys to production happen on Tuesdays.', 'Invoice INV88231 was paid on 3 March.', 'Invoice INV77120 is overdue.'];
    const [deploys, paid, overdue] = await embedder.alignmentScores({ query: 'INV88231', texts });
    expect(paid).toBeGreaterThan(0);
    expect([deploys, overdue]).toEqual([0, 0]);
    const [other, asked] = await embedder.alignmentScores({
      query: 'was invoice INV77120 paid',
      texts: ['Invoice INV88231 was paid on 3 March.', 'Invoice INV77120 was paid on 9 March.'],
    });
    expect(asked).toBeGreaterThan(other ?? 1);
    const [same] = await embedder.alignmentScores({ query: 'quuxcorp zyqx7wabc', texts: ['Quuxcorp zyqx7wabc'] });
    expect(same).toBeCloseTo(1, 5);
  });

  it('reads a misspelt word as its correction', async () => {
    const [typo, clean] = await embedder.alignmentScores({ query: 'allergc reaction', texts: ['allergic reaction', 'allergic reaction'] });
    expect(typo).toBeCloseTo(clean ?? 0, 5);
  });

  it('reads at most 32 distinct content words of a text, so a long text costs no more than a short one', async () => {
    const words = Array.from({ length: 32 }, (_, i) => `word${i}`).join(' ');
    const head = `budget invoice meeting travel ${words}`;
    const [short, long] = await embedder.alignmentScores({
      query: 'budget meeting',
      texts: [head, `${head} ${'zebra giraffe '.repeat(50_000)}`],
    });
    expect(long).toBe(short);
  });
});
