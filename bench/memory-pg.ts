/**
 * Issue #3 benchmark: /mem/query at 100k semantic memories of 384 dimensions
 * on PostgreSQL (pgvector HNSW, `vector_cosine_ops`), random and clustered
 * data: p50/p99 latency and recall@10 against exact search.
 * Baseline (the floor, same run): the same k-NN query sent directly with SQL
 * through `pg`: the statement inside the adapter's search function, with the
 * server's `hnsw.ef_search` and iterative-scan settings and the query vector
 * as a binary parameter (the fastest raw form measured here).
 * Targets: API p50 ≤ 1.3× the raw SQL p50; recall@10 ≥ 0.95 (#3). Since
 * #17 /mem/query is hybrid: API p50 ≤ 1.3× the raw SQL of the same hybrid
 * query, i.e. the statements both legs send (the vector leg's search with
 * its records, and the lexical leg's word counts and search with its
 * records, for the same `k + 10` candidates), each leg on its own
 * connection at the same time, as the server runs them.
 *
 *   npx tsc -b packages/cli && npx tsx bench/memory-pg.ts      (about 4 minutes on 2 cores)
 *
 * Setup: two servers on AGENTINFRA_TEST_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test), sharing a fresh schema
 * `b_<random>` dropped at the end, both with the synthetic model of
 * support/synthetic-vectors.ts, which maps the text `q:<dataset>:<n>` to
 * query vector n, so the benchmark knows the exact answer:
 * - the API path measured against the target: support/in-process-embedder-server.ts,
 *   `agentinfra serve`'s kernel, modules and configuration with the model
 *   computed in the server process. A query is one HTTP request: the device
 *   key check (answered from the verified-credential cache after the first
 *   request), validation, embedding in process, and one SQL statement that
 *   runs the adapter's search function and joins the 10 records;
 * - for comparison, the real `agentinfra serve` whose embedder is the
 *   OpenAI-compatible stand-in support/vector-embedding-server.ts, one more
 *   HTTP round trip per query;
 * - to show what the server adds besides HTTP, the memory service itself
 *   (identity and memory modules on the same schema, jobs off) called in
 *   the benchmark process: validation, embedding, the SQL statement.
 * Loading (support/memory-table-loader.ts): rows go directly into the module's tables
 * while the HNSW index is dropped; PostgreSQL then computes the exact top 10
 * of every query with a sequential scan (the ground truth), and the index is
 * rebuilt with the adapter's definition. Only the queries go through the API.
 * Queries: BENCH_QUERIES (300) per dataset, one at a time over one kept-alive
 * connection per client, after 30 warm-up queries; the measured paths take
 * turns query by query. The servers search with the adapter's default
 * `hnsw.ef_search` (`serve` has no setting for it), and so does the
 * baseline; the raw-SQL sweep shows recall and latency at other values.
 * BENCH_ROWS (100000) sets the rows per dataset, BENCH_DATASETS
 * (`random,clustered`) the datasets. Progress goes to stderr.
 */
import { randomBytes } from 'node:crypto';
import { createPostgresDatabase, pgVectorIndexOptions } from '@agentinfra/adapter-postgres';
import {
  coreConfigSchema,
  createCommonTerms,
  createKernel,
  createLogger,
  lexicalTerms,
  MAX_LEXICAL_POSTINGS,
  newCredential,
  newMasterKey,
  selectiveTerms,
} from '@agentinfra/core';
import pg from 'pg';
import { identityModule } from '../packages/module-identity/dist/index.js';
import { FUSION_EXTRA_CANDIDATES, memoryModule } from '../packages/module-memory/dist/index.js';
import { databaseUrl, displayDatabaseUrl, startBenchServer, startEmbeddingServer } from './support/agentinfra-bench-server.js';
import { createJsonClient } from './support/json-client.js';
import { percentiles } from './support/latency-percentiles.js';
import { buildMemoryHnswIndex, loadSemanticMemories } from './support/memory-table-loader.js';
import { printTable } from './support/serve-process.js';
import { syntheticEmbedder } from './support/synthetic-embedder.js';
import { DATASETS, queryText, queryVector, vectorBinary, vectorLiteral } from './support/synthetic-vectors.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 300);
const SELECTED = DATASETS.filter((dataset) => (process.env.BENCH_DATASETS ?? DATASETS.join(',')).split(',').includes(dataset));
const WARMUP = 30;
const K = 10;
const AGENT = 'bench';
const KEYS = [`self:${AGENT}`];
/** `createPgVectorIndex`'s default `efSearch`, which `agentinfra serve` uses. */
const SERVER_EF_SEARCH = pgVectorIndexOptions.shape.efSearch.parse(undefined);
const EF_SWEEP = [40, 100, 200, 400, 800];
const TARGET_RATIO = 1.3;
const TARGET_RECALL = 0.95;

/** The statement inside `memory_vectors_search` (adapter-postgres pg-vector-tables.ts). */
const KNN_SQL =
  'with c as materialized (select i.id, i.embedding <=> $1::vector as d from memory_vectors_items i ' +
  'where i.scope_keys && $2::text[] order by i.embedding <=> $1::vector limit $3) ' +
  'select c.id, c.d from c order by c.d, c.id collate "C"';
/** What the adapter sends for a query with the memory module's attached record columns (vector-index.ts). */
const SEARCH_WITH_RECORDS_SQL =
  'select s.id, s.distance, r."id" as "attached.", r."agent_id" as "attached.agent_id", r."kind" as "attached.kind", ' +
  'r."text" as "attached.text", r."provenance" as "attached.provenance", r."scope" as "attached.scope", ' +
  'r."created_at" as "attached.created_at" ' +
  'from memory_vectors_search($1::vector, $2::text[], $3, $4) s left join "memory_records" r on r."id" = s.id';
/** The record columns both legs attach (memory-query.ts), as the adapters select them. */
const RECORD_COLUMNS = ['agent_id', 'kind', 'text', 'provenance', 'scope', 'created_at']
  .map((column) => `attached."${column}" as "attached.${column}"`)
  .join(', ');
/** The lexical leg's word counts (adapter-postgres lexical-index.ts), for the words not known to be too common. */
const LEXICAL_COUNT_SQL =
  'select (select count(*)::int from (select 1 from "memory_lexical_docs" d ' +
  `where d.doc @@ to_tsquery('english', quote_literal(t.term)) limit ${MAX_LEXICAL_POSTINGS + 1}) s) as n ` +
  'from unnest($1::text[]) with ordinality t(term, position) order by t.position';
/** The lexical leg's search with the records attached (adapter-postgres lexical-index.ts). */
const LEXICAL_SEARCH_SQL =
  `select t.id, t.score, attached."id" as "attached.", ${RECORD_COLUMNS} from (` +
  'select d.id, ts_rank_cd(d.doc, q, 1)::float8 as score from "memory_lexical_docs" d, to_tsquery(\'english\', $1) q ' +
  'where d.doc @@ q and d.keys && $2::text[] order by score desc, d.id collate "C" limit $3' +
  ') t left join "memory_records" attached on attached."id" = t.id order by t.score desc, t.id collate "C"';
/** Candidates each leg of /mem/query returns for k = K. */
const CANDIDATES = K + FUSION_EXTRA_CANDIDATES;

/** Exact k-NN for the ground truth, run while the table has no HNSW index (a sequential scan). */
const EXACT_SQL = 'select id from memory_vectors_items order by embedding <=> $1::vector, id collate "C" limit $2';

const startedAt = performance.now();
const progress = (line: string) => process.stderr.write(`[memory-pg ${((performance.now() - startedAt) / 1000).toFixed(0)} s] ${line}\n`);
const fixed = (value: number, digits = 2) => value.toFixed(digits);
const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

/** Latencies (ms) and, for paths that return hits, recall@10 per query. */
interface Samples {
  ms: number[];
  recall: number[];
}
const samples = (): Samples => ({ ms: [], recall: [] });
/** One timed call: milliseconds and the dataset rows it returned. */
type Run = (index: number) => Promise<{ ms: number; rows: number[] }>;

/**
 * Sequential and GIN scans of `memory_vectors_items` so far: the raw paths
 * always use the HNSW index, so only the adapter's exact fallback adds to it.
 * Waits for PostgreSQL's statistics (flushed about once a second) first.
 */
async function nonHnswScans(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await sql.query('select pg_stat_clear_snapshot()');
  const { rows } = await sql.query<{ n: string }>(
    `select coalesce(sum(i.idx_scan), 0) + max(t.seq_scan) as n
       from pg_stat_user_tables t left join pg_stat_user_indexes i
         on i.relid = t.relid and i.indexrelname <> 'memory_vectors_items_embedding'
      where t.relid = 'memory_vectors_items'::regclass`,
  );
  return Number(rows[0]?.n);
}

const schema = `b_${randomBytes(6).toString('hex')}`;
const admin = new pg.Client({ connectionString: databaseUrl });
try {
  await admin.connect();
} catch (error) {
  const { code, message } = error as { code?: string; message?: string };
  process.stderr.write(
    `[agentinfra] memory-pg needs PostgreSQL with pgvector: cannot connect to ${displayDatabaseUrl(databaseUrl)} ` +
      `(${code ?? message}); set AGENTINFRA_TEST_DATABASE_URL\n`,
  );
  process.exit(1);
}

const embedder = await startEmbeddingServer();
const sql = new pg.Client({ connectionString: databaseUrl });
/** The raw hybrid query's second connection (the lexical leg). */
const lexicalSql = new pg.Client({ connectionString: databaseUrl });
const servers: Array<Awaited<ReturnType<typeof startBenchServer>>> = [];
let library: ReturnType<typeof createKernel> | undefined;
try {
  const database = { engine: 'postgres', url: databaseUrl, schema } as const;
  const inProcess = await startBenchServer(database, embedder.url, { embedder: 'in-process' });
  servers.push(inProcess);
  const overHttp = await startBenchServer(database, embedder.url);
  servers.push(overHttp);
  progress(`two agentinfra servers on schema ${schema} (${displayDatabaseUrl(databaseUrl)}), embedding server ${embedder.url}`);
  library = createKernel({
    config: coreConfigSchema.parse({ bridgeKey: newCredential('bk_'), masterKey: newMasterKey(), jobs: { enabled: false } }),
    modules: [identityModule, memoryModule],
    adapters: { sql: createPostgresDatabase({ url: databaseUrl, schema }), embedder: syntheticEmbedder },
    logger: createLogger({ level: 'warn' }),
  });
  await library.start();
  const memory = library.service<{ query(input: unknown): Promise<{ hits: Array<{ id: string }> }> }>('agent-memory');
  await sql.connect();
  await sql.query(`set search_path to "${schema}", public`);
  await sql.query('set hnsw.iterative_scan = relaxed_order');
  await lexicalSql.connect();
  await lexicalSql.query(`set search_path to "${schema}", public`);
  /** Words the raw lexical leg found too common, not counted again (the adapter's own `CommonTerms`). */
  const commonWords = createCommonTerms();
  /** The lexical leg's statements for `text`, as the adapter sends them. */
  const rawLexicalLeg = async (text: string) => {
    const terms = lexicalTerms(text);
    const counts = await commonWords.countsAsync(terms, async (unknown) =>
      (await lexicalSql.query<{ n: number }>(LEXICAL_COUNT_SQL, [unknown])).rows.map((row) => row.n),
    );
    const kept = selectiveTerms(terms, counts);
    if (kept.length === 0) return [];
    const query = kept.map((term) => `'${term}'`).join(' | ');
    return (await lexicalSql.query<{ id: string }>(LEXICAL_SEARCH_SQL, [query, KEYS, CANDIDATES])).rows;
  };
  const clients = servers.map((server) => createJsonClient(`${server.process.url}/functions/v1`));
  const embeddings = createJsonClient(embedder.url);
  const queryApi = (server: 0 | 1, q: string) =>
    (clients[server] as (typeof clients)[number]).post<{ hits: Array<{ id: string }> }>(
      '/agent-memory/mem/query',
      { agent_id: AGENT, q, k: K, scope: ['self'] },
      { authorization: (servers[server] as (typeof servers)[number]).authorization },
    );

  const mainRows: Array<Array<string | number>> = [];
  const verdicts: string[] = [];
  const sweepRows: Array<Array<string | number>> = [];
  const loadRows: Array<Array<string | number>> = [];

  for (const dataset of SELECTED) {
    const idOf = (row: number) => `mem_${dataset}_${row}`;
    const rowOf = (id: string) => Number(id.slice(`mem_${dataset}_`.length));
    const queries = Array.from({ length: WARMUP + QUERIES }, (_, i) => ({ text: queryText(dataset, i), vector: queryVector(dataset, i) }));
    const measuredIndexes = Array.from({ length: QUERIES }, (_, i) => WARMUP + i);

    progress(`${dataset}: loading ${ROWS} rows`);
    const insertSeconds = await loadSemanticMemories(sql, { dataset, count: ROWS, agentId: AGENT, idOf });
    progress(`${dataset}: exact top ${K} of ${QUERIES} queries (sequential scan)`);
    const exactStarted = performance.now();
    const exact = new Map<number, Set<number>>();
    for (const index of measuredIndexes) {
      const { rows } = await sql.query<{ id: string }>(EXACT_SQL, [vectorBinary(queries[index]?.vector as Float32Array), K]);
      exact.set(index, new Set(rows.map((row) => rowOf(row.id))));
    }
    const exactMs = (performance.now() - exactStarted) / QUERIES;
    const recallOf = (index: number, rows: readonly number[]) => rows.filter((row) => exact.get(index)?.has(row)).length / K;
    progress(`${dataset}: building the HNSW index`);
    const built = await buildMemoryHnswIndex(sql);
    loadRows.push([
      dataset,
      ROWS,
      fixed(insertSeconds, 1),
      Math.round(ROWS / insertSeconds),
      fixed(built.seconds, 1),
      fixed(built.mebibytes, 0),
      fixed(exactMs, 1),
    ]);

    const timedSql =
      (text: string, values: (index: number) => unknown[]): Run =>
      async (index) => {
        const started = performance.now();
        const { rows } = await sql.query<{ id: string }>(text, values(index));
        return { ms: performance.now() - started, rows: rows.map((row) => rowOf(row.id)) };
      };
    const vectorOf = (index: number) => queries[index]?.vector as Float32Array;
    const knn = timedSql(KNN_SQL, (index) => [vectorBinary(vectorOf(index)), KEYS, K]);
    const baseline = { label: 'raw SQL k-NN statement through pg, vector as binary (baseline)', run: knn, samples: samples() };
    const throughApi = (server: 0 | 1, label: string): typeof baseline => ({
      label,
      run: async (index) => {
        const { body, ms } = await queryApi(server, queries[index]?.text as string);
        return { ms, rows: body.hits.map((hit) => rowOf(hit.id)) };
      },
      samples: samples(),
    });
    const viaApi = throughApi(0, 'API POST /mem/query (embedder in process)');
    const rawHybrid: typeof baseline = {
      label: 'raw SQL of the hybrid query: vector leg ‖ lexical leg, two connections (#17 baseline)',
      run: async (index) => {
        const started = performance.now();
        const [vectorLeg] = await Promise.all([
          sql.query<{ id: string }>(SEARCH_WITH_RECORDS_SQL, [vectorBinary(vectorOf(index)), KEYS, CANDIDATES, SERVER_EF_SEARCH]),
          rawLexicalLeg(queries[index]?.text as string),
        ]);
        return { ms: performance.now() - started, rows: vectorLeg.rows.slice(0, K).map((row) => rowOf(row.id)) };
      },
      samples: samples(),
    };
    const paths: Array<typeof baseline> = [
      baseline,
      {
        label: 'raw SQL k-NN, vector as text',
        run: timedSql(KNN_SQL, (index) => [vectorLiteral(vectorOf(index)), KEYS, K]),
        samples: samples(),
      },
      {
        label: 'raw SQL: what the adapter sends (search function + records)',
        run: timedSql(SEARCH_WITH_RECORDS_SQL, (index) => [vectorBinary(vectorOf(index)), KEYS, K, SERVER_EF_SEARCH]),
        samples: samples(),
      },
      rawHybrid,
      viaApi,
      throughApi(1, 'API POST /mem/query (embedding server over HTTP)'),
      {
        label: 'memory service query() in the benchmark process (no HTTP)',
        run: async (index) => {
          const started = performance.now();
          const { hits } = await memory.query({ agent_id: AGENT, q: queries[index]?.text, k: K, scope: ['self'] });
          return { ms: performance.now() - started, rows: hits.map((hit) => rowOf(hit.id)) };
        },
        samples: samples(),
      },
    ];

    await sql.query(`set hnsw.ef_search = ${SERVER_EF_SEARCH}`);
    const scansBefore = await nonHnswScans();
    progress(`${dataset}: ${WARMUP} warm-up and ${QUERIES} measured queries per path`);
    for (let index = 0; index < WARMUP; index++) for (const { run } of paths) await run(index);
    for (const index of measuredIndexes) {
      for (let turn = 0; turn < paths.length; turn++) {
        const path = paths[(index + turn) % paths.length] as (typeof paths)[number];
        const { ms, rows } = await path.run(index);
        path.samples.ms.push(ms);
        path.samples.recall.push(recallOf(index, rows));
      }
    }

    const fallbacks = (await nonHnswScans()) - scansBefore;
    progress(`${dataset}: parts of the API path`);
    const parts = { embed: samples(), withoutSearch: samples() };
    for (const index of measuredIndexes) {
      const text = queries[index]?.text;
      parts.embed.ms.push((await embeddings.post('/v1/embeddings', { model: 'synthetic-384', input: [text] })).ms);
      parts.withoutSearch.ms.push((await queryApi(0, 'zero')).ms);
    }

    const floor = percentiles(baseline.samples.ms).p50;
    const row = (label: string, found: Samples) => {
      const { p50, p99 } = percentiles(found.ms);
      return [
        dataset,
        label,
        fixed(p50),
        fixed(p99),
        found.recall.length > 0 ? fixed(mean(found.recall), 3) : '',
        `${fixed(p50 / floor)}×`,
      ];
    };
    mainRows.push(
      ...paths.map(({ label, samples: found }) => row(label, found)),
      row('part: the embedding request alone (bench → embedding server)', parts.embed),
      row('part: API (embedder in process) without vector search (q embeds to zero)', parts.withoutSearch),
    );
    const api50 = percentiles(viaApi.samples.ms).p50;
    const hybrid50 = percentiles(rawHybrid.samples.ms).p50;
    const apiRecall = mean(viaApi.samples.recall);
    const fastestRaw = Math.min(...paths.slice(0, 2).map((path) => percentiles(path.samples.ms).p50));
    verdicts.push(
      `${dataset}: API p50 ${fixed(api50 / fastestRaw)}× the fastest raw k-NN variant (p50 ${fixed(fastestRaw)} ms)`,
      `${dataset}: ${fallbacks} of ${3 * (WARMUP + QUERIES)} queries through agentinfra (two servers, the in-process service) fell back to the adapter's exact query (fewer than k HNSW hits)`,
      `${dataset}: API p50 ${fixed(api50 / floor)}× raw SQL (target ≤ ${TARGET_RATIO}×: ${api50 / floor <= TARGET_RATIO ? 'met' : 'NOT met'}); ` +
        `API recall@10 ${fixed(apiRecall, 3)} (target ≥ ${TARGET_RECALL}: ${apiRecall >= TARGET_RECALL ? 'met' : 'NOT met'})`,
      `${dataset}: API p50 ${fixed(api50 / hybrid50)}× the raw SQL of the same hybrid query (p50 ${fixed(hybrid50)} ms; #17 target ≤ ${TARGET_RATIO}×: ${api50 / hybrid50 <= TARGET_RATIO ? 'met' : 'NOT met'})`,
    );

    progress(`${dataset}: hnsw.ef_search sweep (raw SQL)`);
    for (const ef of EF_SWEEP) {
      await sql.query(`set hnsw.ef_search = ${ef}`);
      const plan = await sql.query<{ 'QUERY PLAN': string }>(`explain ${KNN_SQL}`, [vectorLiteral(vectorOf(WARMUP)), KEYS, K]);
      const usesIndex = plan.rows.some((line) => line['QUERY PLAN'].includes('Index Scan using memory_vectors_items_embedding'));
      const found = samples();
      for (const index of measuredIndexes) {
        const { ms, rows } = await knn(index);
        found.ms.push(ms);
        found.recall.push(recallOf(index, rows));
      }
      const { p50, p99 } = percentiles(found.ms);
      sweepRows.push([
        dataset,
        ef,
        usesIndex ? 'HNSW index scan' : 'no HNSW (planner chose another plan)',
        fixed(mean(found.recall), 3),
        fixed(p50),
        fixed(p99),
      ]);
    }
  }
  for (const client of clients) client.close();
  embeddings.close();

  process.stdout.write(
    `\n### /mem/query on PostgreSQL, ${ROWS / 1000}k memories × 384 dimensions, k = ${K}, hnsw.ef_search = ${SERVER_EF_SEARCH}\n\n`,
  );
  printTable(['data', 'path', 'p50 ms', 'p99 ms', 'recall@10', 'p50 vs baseline'], mainRows);
  process.stdout.write(`\n${verdicts.join('\n')}\n`);
  process.stdout.write('\n### Raw SQL k-NN: recall@10 and latency by hnsw.ef_search\n\n');
  printTable(['data', 'ef_search', 'plan', 'recall@10', 'p50 ms', 'p99 ms'], sweepRows);
  process.stdout.write('\n### Loading (direct multi-row INSERTs, then CREATE INDEX … USING hnsw, m = 16, ef_construction = 64)\n\n');
  printTable(['data', 'rows', 'insert s', 'rows/s', 'HNSW build s', 'index MiB', 'exact scan ms/query'], loadRows);
  process.stdout.write(
    `\nOne query at a time over one kept-alive connection per client; PostgreSQL ${(await admin.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]?.v}, ` +
      `the server, the embedder stand-in and the benchmark share the machine's cores. Total ${fixed((performance.now() - startedAt) / 1000, 0)} s.\n`,
  );
} finally {
  await library?.stop();
  for (const server of servers) await server.stop();
  await embedder.stop();
  await sql.end().catch(() => undefined);
  await lexicalSql.end().catch(() => undefined);
  await admin.query(`drop schema if exists "${schema}" cascade`);
  await admin.end();
}
