import type { Embedder, LexicalHit, VectorHit } from '@agentinfra/core';

/** A hit of either leg; both carry the attached record row (with its `text`). */
type LegHit = VectorHit | LexicalHit;

/**
 * Characters of a candidate's text the word alignment reads: its first
 * words (the aligner keeps 32 distinct content words anyway), so that the
 * cost per candidate does not grow with a 32 KiB memory.
 */
export const ALIGNED_TEXT_CHARS = 4_096;

/**
 * The rankings a hybrid query fuses (see `fuseRankings`). With an embedder
 * that has `alignmentScores` (the local word-vector model), one ranking:
 * every candidate either leg found (vector hits first, then the lexical hits
 * the vector leg missed) ordered by the word alignment of `q` with its text,
 * best first (equal scores keep that order). On the tuning half of
 * bench/data/retrieval-set.json this ranks better than fusing the two legs
 * (MRR 0.576 vs 0.573, and 0.550 vs 0.452 with typos; bench/RESULTS.md).
 * Without it (a remote sentence model): the vector and lexical rankings.
 * @throws Error when the embedder fails.
 */
export async function rankingsToFuse(
  embedder: Embedder,
  q: string,
  vectorHits: readonly LegHit[],
  lexicalHits: readonly LegHit[],
): Promise<LegHit[][]> {
  if (embedder.alignmentScores === undefined) return [[...vectorHits], [...lexicalHits]];
  const seen = new Set(vectorHits.map((hit) => hit.id));
  const candidates = [...vectorHits, ...lexicalHits.filter((hit) => !seen.has(hit.id))];
  if (candidates.length === 0) return [];
  const texts = candidates.map((hit) => String(hit.row?.text ?? '').slice(0, ALIGNED_TEXT_CHARS));
  const scores = await embedder.alignmentScores({ query: q, texts });
  const aligned = candidates
    .map((hit, position) => ({ hit, position, score: scores[position] ?? 0 }))
    .sort((a, b) => b.score - a.score || a.position - b.position)
    .map((entry) => entry.hit);
  return [aligned];
}
