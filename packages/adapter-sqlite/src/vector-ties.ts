import type { VectorHit } from '@agentinfra/core';

/** sqlite-vec refuses KNN queries asking for more neighbours than this. */
export const VEC0_MAX_K = 4096;

/** How much wider the second KNN pass is than the first. */
const WIDENING = 4;

/**
 * The best `k` hits (best first, equal scores by ascending id) from at most
 * two KNN passes, however many items tie:
 * - `nearest(fetch)`: the `fetch` nearest neighbours, ranked, from one KNN
 *   pass (sqlite-vec selects them one by one, so a pass costs about
 *   n × min(fetch, 1024) steps for n vectors);
 * - `scan()`: the best `k`, ranked, from an ordered scan of every vector,
 *   only for `k` of 4096 or more (sqlite-vec's KNN limit).
 * A pass of `k + 1` decides unless the k-th and (k+1)-th scores tie; then a
 * pass four times as wide (at most 4096) decides. When the tie ends within
 * it, the hits are exactly those of ranking every item by score then id.
 * When more items tie than it holds, the tied places go to the lowest ids
 * among the tied items the pass returned (sqlite-vec picks among equal
 * distances by storage order, the same on every call while the index is
 * unchanged), not necessarily the lowest of all tied items: scores stay
 * exact and results repeatable, but finding those ids took an ordered scan
 * of every visible vector on the event loop (0.65–1.15 s per query over
 * 100 000 copies of one memory).
 * @returns at most `k` hits.
 */
export function bestHits(k: number, nearest: (fetch: number) => VectorHit[], scan: () => VectorHit[]): VectorHit[] {
  const first = k + 1;
  if (first > VEC0_MAX_K) return scan();
  const hits = nearest(first);
  const wide = Math.min(first * WIDENING, VEC0_MAX_K);
  const tieContinues = hits.length === first && hits[first - 1]?.score === hits[k - 1]?.score;
  if (!tieContinues || wide === first) return hits.slice(0, k);
  return nearest(wide).slice(0, k);
}
