import { createWordVectorEmbedder } from '@agentinfra/adapter-wordvec';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { rankRetrievalSet } from './test-support/retrieval-evaluation.js';
import { loadRetrievalSet, scoreRankings, splitRetrievalSet, withTypos } from './test-support/retrieval-set.js';

/**
 * Quality of /mem/query on the held-out half of bench/data/retrieval-set.json
 * with the local embedder (#17). The floors are the figures
 * bench/retrieval-quality.ts reports (bench/RESULTS.md) less a small margin,
 * so a change that makes retrieval worse fails here; the split is seeded.
 */
describe('retrieval split (#17)', () => {
  it('cuts the queries the same way every time, into disjoint halves', () => {
    const { tuning, heldOut } = splitRetrievalSet();
    expect([tuning.length, heldOut.length]).toEqual([52, 52]);
    expect(splitRetrievalSet()).toEqual({ tuning, heldOut });
    const tuningIds = new Set(tuning.map((query) => query.id));
    expect(heldOut.some((query) => tuningIds.has(query.id))).toBe(false);
  });
});

describe.each(sqlDatabases())('hybrid retrieval quality on $name (#17)', ({ create }) => {
  it('beats cosine similarity alone on the held-out half, and holds its figures', { timeout: 60_000 }, async () => {
    const set = loadRetrievalSet();
    const { heldOut } = splitRetrievalSet(set);
    const fixture = await create();
    try {
      const typos = withTypos(heldOut);
      const [rankings, typoRankings] = await rankRetrievalSet({
        db: fixture.db,
        embedder: createWordVectorEmbedder(),
        set,
        queryLists: [heldOut, typos],
      });
      const hybrid = scoreRankings(heldOut, rankings?.hybrid ?? []);
      const vector = scoreRankings(heldOut, rankings?.vector ?? []);
      expect(hybrid.mrr).toBeGreaterThan(vector.mrr);
      expect(hybrid.recallAt5).toBeGreaterThanOrEqual(vector.recallAt5);
      expect(hybrid.mrr).toBeGreaterThanOrEqual(0.53);
      expect(hybrid.recallAt1).toBeGreaterThanOrEqual(0.42);
      expect(scoreRankings(typos, typoRankings?.hybrid ?? []).mrr).toBeGreaterThanOrEqual(0.5);
    } finally {
      await fixture.cleanup();
    }
  });
});
