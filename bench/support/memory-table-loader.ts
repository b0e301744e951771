/**
 * Bulk loading of semantic memories straight into agent-memory's PostgreSQL
 * tables, for benchmarks that then query through the API: rows go in far
 * faster than through /mem/write (which inserts into a live HNSW graph one
 * row at a time), and the index is rebuilt once afterwards. Mirrors what
 * the memory service and the PostgreSQL vector index write: `memory_records`
 * (JSON `scope`, ms `created_at`) and `memory_vectors_items` (visibility keys
 * `self:<agent>`, `vector(384)`), HNSW `memory_vectors_items_embedding`.
 */
import type pg from 'pg';
import { type DatasetKind, dataText, dataVector, vectorBinary } from './synthetic-vectors.js';

/** Rows per INSERT statement (2 parameters each for the vectors). */
const BATCH = 1_000;

/**
 * Empties the memory tables, drops the HNSW index, then inserts rows
 * `0 … count − 1` of `dataset` for agent `agentId` (scope `self`, text
 * `vec:<dataset>:<n>`, id `idOf(n)`), vectors as pgvector binary parameters,
 * in transactions of {@link BATCH} rows; finally vacuums and analyses both
 * tables and the lexical index's `memory_lexical_docs` (filled by its trigger). `sql` must have the server's schema first in its `search_path`.
 * @returns seconds spent inserting (without the vacuum).
 */
export async function loadSemanticMemories(
  sql: pg.Client,
  options: { dataset: DatasetKind; count: number; agentId: string; idOf: (row: number) => string },
): Promise<number> {
  const { dataset, count, agentId, idOf } = options;
  await sql.query('truncate memory_records, memory_vectors_items cascade');
  await sql.query('drop index if exists memory_vectors_items_embedding');
  const startedAt = performance.now();
  for (let start = 0; start < count; start += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, count - start) }, (_, i) => start + i);
    const ids = rows.map(idOf);
    await sql.query('begin');
    await sql.query(
      `insert into memory_records (id, agent_id, kind, text, provenance, scope, created_at)
       select id, $3, 'semantic', text, 'bench', '["self"]', $4 from unnest($1::text[], $2::text[]) as t(id, text)`,
      [ids, rows.map((row) => dataText(dataset, row)), agentId, Date.now()],
    );
    await sql.query(
      `insert into memory_vectors_items (id, agent_id, scope_keys, embedding) values ${rows
        .map((_, i) => `($${2 * i + 2}, $1::text, array['self:' || $1::text], $${2 * i + 3}::vector)`)
        .join(', ')}`,
      [agentId, ...rows.flatMap((row, i) => [ids[i], vectorBinary(dataVector(dataset, row))])],
    );
    await sql.query('commit');
  }
  const seconds = (performance.now() - startedAt) / 1000;
  await sql.query('vacuum (analyze) memory_records');
  await sql.query('vacuum (analyze) memory_vectors_items');
  // The lexical index's rows were written by its trigger; vacuum merges its GIN pending list, as autovacuum would.
  await sql.query('vacuum (analyze) memory_lexical_docs');
  return seconds;
}

/**
 * Builds `memory_vectors_items_embedding` as the PostgreSQL adapter defines
 * it (HNSW, `vector_cosine_ops`, pgvector defaults m = 16, ef_construction =
 * 64) with `maintenance_work_mem` 2 GB (the graph stays in memory) and one
 * parallel worker, then analyses the table.
 * @returns build seconds and the index size in MiB.
 */
export async function buildMemoryHnswIndex(sql: pg.Client): Promise<{ seconds: number; mebibytes: number }> {
  await sql.query(`set maintenance_work_mem = '2GB'`);
  await sql.query('set max_parallel_maintenance_workers = 1');
  const startedAt = performance.now();
  await sql.query('create index memory_vectors_items_embedding on memory_vectors_items using hnsw (embedding vector_cosine_ops)');
  const seconds = (performance.now() - startedAt) / 1000;
  await sql.query('analyze memory_vectors_items');
  const { rows } = await sql.query<{ mib: string }>(`select pg_relation_size('memory_vectors_items_embedding') / 1048576.0 as mib`);
  return { seconds, mebibytes: Number(rows[0]?.mib) };
}
