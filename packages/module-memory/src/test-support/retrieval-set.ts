import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { seededRandom } from '@agentinfra/core/testing';
import { z } from 'zod';

/**
 * bench/data/retrieval-set.json (written for this project): 200 agent
 * memories and 104 paraphrased queries, each labelled with the memories it
 * should find. Split by {@link splitRetrievalSet} into a tuning half (the
 * only queries any retrieval parameter may be chosen on) and a held-out half
 * (reported, never tuned on), issue #17.
 */
const retrievalSetSchema = z.object({
  memories: z.array(z.object({ id: z.string(), text: z.string() })),
  queries: z.array(z.object({ id: z.string(), text: z.string(), relevant: z.array(z.string()).min(1) })),
});
/** The whole labelled set. */
export type RetrievalSet = z.output<typeof retrievalSetSchema>;
/** One labelled query: `relevant` lists the ids of the memories it should find. */
export type RetrievalQuery = RetrievalSet['queries'][number];

/** Seed of the tuning / held-out split (committed; changing it changes the held-out half). */
export const RETRIEVAL_SPLIT_SEED = 17;

/** Reads and checks bench/data/retrieval-set.json. @throws ZodError when the file does not have the expected shape. */
export function loadRetrievalSet(): RetrievalSet {
  const file = fileURLToPath(new URL('../../../../bench/data/retrieval-set.json', import.meta.url));
  return retrievalSetSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

/**
 * The queries shuffled with {@link RETRIEVAL_SPLIT_SEED} (Fisher–Yates,
 * mulberry32) and cut in two: the first half for tuning, the rest held out.
 * The same every time.
 */
export function splitRetrievalSet(set: RetrievalSet = loadRetrievalSet()): { tuning: RetrievalQuery[]; heldOut: RetrievalQuery[] } {
  const random = seededRandom(RETRIEVAL_SPLIT_SEED);
  const order = set.queries.slice();
  for (let i = order.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as RetrievalQuery, order[i] as RetrievalQuery];
  }
  const half = Math.floor(order.length / 2);
  return { tuning: order.slice(0, half), heldOut: order.slice(half) };
}

/**
 * The same queries with deterministic typos: in 40% of the words of 5 or more
 * letters, one deletion, swap of neighbours or substitution, drawn from
 * `random` (numbers in [0, 1); default mulberry32 seeded with 7), so every
 * run sees the same misspellings.
 */
export function withTypos(queries: readonly RetrievalQuery[], random: () => number = seededRandom(7)): RetrievalQuery[] {
  const typo = (word: string): string => {
    const chars = Array.from(word);
    const at = 1 + Math.floor(random() * (chars.length - 2));
    const kind = random();
    if (kind < 1 / 3) chars.splice(at, 1);
    else if (kind < 2 / 3) [chars[at], chars[at + 1]] = [chars[at + 1] ?? '', chars[at] ?? ''];
    else chars[at] = 'etaoinshr'.charAt(Math.floor(random() * 9));
    return chars.join('');
  };
  return queries.map((query) => ({ ...query, text: query.text.replace(/[A-Za-z]{5,}/g, (word) => (random() < 0.4 ? typo(word) : word)) }));
}

/** Recall at 1 and 5 and mean reciprocal rank, each in [0, 1]. */
export interface RetrievalScores {
  recallAt1: number;
  recallAt5: number;
  mrr: number;
}

/**
 * Scores ranked answers: `rankings[i]` lists memory ids best first for
 * `queries[i]`; a query counts at the rank of its first relevant memory (none
 * found: 0 reciprocal rank). Rankings are as deep as the caller made them
 * (MRR@depth).
 */
export function scoreRankings(queries: readonly RetrievalQuery[], rankings: readonly (readonly string[])[]): RetrievalScores {
  let hits1 = 0;
  let hits5 = 0;
  let reciprocal = 0;
  queries.forEach((query, index) => {
    const rank = (rankings[index] ?? []).findIndex((id) => query.relevant.includes(id));
    if (rank === 0) hits1 += 1;
    if (rank >= 0 && rank < 5) hits5 += 1;
    if (rank >= 0) reciprocal += 1 / (rank + 1);
  });
  const n = Math.max(1, queries.length);
  return { recallAt1: hits1 / n, recallAt5: hits5 / n, mrr: reciprocal / n };
}
