import { namedFeatureHash } from './text-ngrams.js';

/**
 * Where an instruction sits in its text: in the first segment after the
 * text's first line (for the visible text, the first sentence of the body,
 * after the subject) or in the last segment. An instruction put before a
 * mail's greeting or after its signature is unusual in ordinary mail. Such
 * a segment gets `place:first:cued` or `place:last:cued` when an
 * instruction phrase (`instruction-phrasing.ts`) ends in it; other segments,
 * and first or last segments without one, get nothing (a place feature on
 * every first sentence raised "Your order has shipped…" to 0.6 and lowered
 * the labelled set's cross-validated recall).
 */

/** Where a segment sits: see the module comment. */
export type SegmentPlace = 'first' | 'last' | 'inner';

/**
 * The place feature buckets of a segment, for a table with index mask `mask`.
 * @returns a function from (place, whether an instruction phrase ends in the segment) to its buckets (none for `inner` or without a phrase).
 */
export function placeFeatures(mask: number): (place: SegmentPlace, cued: boolean) => readonly number[] {
  const table = { first: [namedFeatureHash('place:first:cued') & mask], last: [namedFeatureHash('place:last:cued') & mask] };
  const none: readonly number[] = [];
  return (place, cued) => (place === 'inner' || !cued ? none : table[place]);
}
