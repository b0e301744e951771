import type { VectorHit } from '@agentinfra/core';

/** sqlite-vec refuses KNN queries asking for more neighbours than this. */
export const VEC0_MAX_K = 4096;

/** How much wider the second KNN pass is than the first. */
const WIDENING = 4;

/**
 * The best `k` hits (best first, equal scores by ascending id) from at most
 * two KNN passes and one ordered scan, however many items tie:
 * - `nearest(fetch)`: the `fetch` nearest neighbours, ranked, from one KNN
 *   pass (sqlite-vec selects them one by one, so a pass costs about
 *   n × min(fetch, 1024) steps for n vectors);
 * - `scan()`: the best `k`, ranked, from an ordered scan of every vector (a
 *   few times a pass for k = 100).
 * A pass of `k + 1` decides unless the k-th and (k+1)-th scores tie; then a
 * pass four times as wide, and if the tie still continues there, the scan.
 * `k` of 4096 or more goes straight to the scan (sqlite-vec's KNN limit).
 * Widening without a bound took up to five passes, each wider, before the
 * same scan (#11: 500 copies of one memory cost ~15 ms per query).
 * @returns at most `k` hits.
 */
export function bestHits(k: number, nearest: (fetch: number) => VectorHit[], scan: () => VectorHit[]): VectorHit[] {
  const first = k + 1;
  const widths = first > VEC0_MAX_K ? [] : [first, Math.min(first * WIDENING, VEC0_MAX_K)];
  for (const [pass, fetch] of widths.entries()) {
    if (pass > 0 && fetch === widths[0]) break;
    const hits = nearest(fetch);
    const tieContinues = hits.length === fetch && hits[fetch - 1]?.score === hits[k - 1]?.score;
    if (!tieContinues) return hits.slice(0, k);
  }
  return scan();
}
