/**
 * Reciprocal rank fusion constant: a hit at rank r (from 1) of a leg adds
 * 1 / (FUSION_K + r). Cormack et al. (SIGIR 2009) use 60; on the tuning half
 * of bench/data/retrieval-set.json the landscape is flat (mean MRR over both
 * engines, with and without typos: 0.521 at 1, 0.514 at 5, 0.510 at 20,
 * 0.507 at 60); 5 stays, within 0.007 of the best, see bench/RESULTS.md.
 */
export const FUSION_K = 5;

/**
 * Candidates each leg returns beyond `k`, so that a memory ranked just below
 * `k` by both legs can still rise into the fused top `k` (tuned with
 * {@link FUSION_K}: `k + 10` as good as `k + 90` at k = 10).
 */
export const FUSION_EXTRA_CANDIDATES = 10;

/** A fused hit: the id, its fused score and the hit of each leg that found it (`undefined` where a leg did not). */
export interface FusedHit<H> {
  id: string;
  /** In (0, 1]: 1 for rank 1 in every leg; see {@link fuseRankings}. */
  score: number;
  hits: Array<H | undefined>;
}

/**
 * Fuses ranked lists (best first) by reciprocal rank fusion with equal
 * weights: score(d) = Σ_legs 1 / (FUSION_K + rank of d in the leg), divided
 * by its largest possible value (legs × 1 / (FUSION_K + 1)), so the score
 * lies in (0, 1], is 1 only for a hit ranked first by every leg, and does
 * not depend on the legs' own score scales (cosine and BM25 do not compare).
 * Equal fused scores are ordered by the better rank in the first leg, then
 * by id, so the order is deterministic.
 * @returns the best `k` hits, best first; scores are non-increasing.
 */
export function fuseRankings<H extends { id: string }>(legs: ReadonlyArray<readonly H[]>, k: number): FusedHit<H>[] {
  const fused = new Map<string, { sum: number; firstRank: number; hits: Array<H | undefined> }>();
  legs.forEach((leg, legIndex) => {
    leg.forEach((hit, position) => {
      let entry = fused.get(hit.id);
      if (entry === undefined) {
        entry = { sum: 0, firstRank: Number.POSITIVE_INFINITY, hits: legs.map(() => undefined) };
        fused.set(hit.id, entry);
      }
      if (entry.hits[legIndex] !== undefined) return;
      entry.hits[legIndex] = hit;
      entry.sum += 1 / (FUSION_K + position + 1);
      if (legIndex === 0) entry.firstRank = position;
    });
  });
  const best = legs.length / (FUSION_K + 1);
  return [...fused]
    .sort(([idA, a], [idB, b]) => b.sum - a.sum || a.firstRank - b.firstRank || (idA < idB ? -1 : idA > idB ? 1 : 0))
    .slice(0, k)
    .map(([id, entry]) => ({ id, score: entry.sum / best, hits: entry.hits }));
}
