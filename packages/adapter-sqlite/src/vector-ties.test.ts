import type { VectorHit } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import { bestHits, VEC0_MAX_K } from './vector-ties.js';

/** `count` hits with ids h0000…, all of score `score` after the first `better` of score 1. */
function ranking(count: number, score: number, better = 0): VectorHit[] {
  return Array.from({ length: count }, (_, index) => ({ id: `h${String(index).padStart(4, '0')}`, score: index < better ? 1 : score }));
}

/** bestHits over `all`, recording the KNN passes asked for and whether the scan ran. */
function run(k: number, all: VectorHit[]) {
  const passes: number[] = [];
  let scans = 0;
  const hits = bestHits(
    k,
    (fetch) => {
      passes.push(fetch);
      return all.slice(0, fetch);
    },
    () => {
      scans += 1;
      return all.slice(0, k);
    },
  );
  return { hits, passes, scans };
}

describe('bestHits', () => {
  it('answers from one pass of k + 1 when the k-th place is not tied', () => {
    const all = [...ranking(5, 1), ...ranking(20, 0.5).map((hit) => ({ ...hit, id: `z${hit.id}` }))];
    expect(run(5, all)).toMatchObject({ passes: [6], scans: 0, hits: all.slice(0, 5) });
  });

  it('widens once for a short tie', () => {
    const all = [...ranking(12, 0.9, 3), { id: 'last', score: 0.1 }];
    expect(run(5, all)).toMatchObject({ passes: [6, 24], scans: 0, hits: all.slice(0, 5) });
  });

  it('answers from the wider pass however many items tie, never scanning', () => {
    const all = ranking(5_000, 0.7);
    expect(run(100, all)).toMatchObject({ passes: [101, 404], scans: 0, hits: all.slice(0, 100) });
    expect(run(2_000, ranking(10_000, 0.7))).toMatchObject({ passes: [2_001, VEC0_MAX_K], scans: 0 });
    expect(run(VEC0_MAX_K - 1, ranking(10_000, 0.7))).toMatchObject({ passes: [VEC0_MAX_K], scans: 0 });
  });

  it(`scans only for k of ${VEC0_MAX_K} or more`, () => {
    expect(run(VEC0_MAX_K, ranking(10, 0.7))).toMatchObject({ passes: [], scans: 1 });
  });
});
