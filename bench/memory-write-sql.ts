/**
 * Issue #3 benchmark: /mem/write throughput of `agentinfra serve` on
 * PostgreSQL (pgvector HNSW) against the same server on SQLite (the
 * embedded default, sqlite-vec; the baseline), measured in the same run with
 * the same embedder and the same texts.
 *
 *   npx tsc -b packages/cli && npx tsx bench/memory-write-sql.ts      (about 1 minute on 2 cores)
 *
 * Both servers run side by side, each in its own process, with the
 * OpenAI-compatible stand-in of support/vector-embedding-server.ts as embedder (384
 * dimensions, a third process). PostgreSQL: AGENTINFRA_TEST_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/test), a fresh schema
 * `b_<random>` dropped at the end, the default pool of 10. SQLite: a file in
 * a temporary folder. Load: autocannon with 8 connections, BENCH_WRITES
 * (5000) writes per engine and kind after 500 warm-up writes; semantic
 * writes are embedded and indexed (HNSW insert / vec0 insert), episode
 * writes are a plain row insert. Engines take turns on each kind,
 * PostgreSQL first.
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  type BenchServer,
  databaseUrl,
  displayDatabaseUrl,
  startBenchServer,
  startEmbeddingServer,
} from './support/agentinfra-bench-server.js';
import { printTable } from './support/serve-process.js';
import { dataText } from './support/synthetic-vectors.js';

const WRITES = Number(process.env.BENCH_WRITES ?? 5_000);
const WARMUP = 500;
const CONNECTIONS = 8;
const KINDS = ['semantic', 'episode'] as const;

/** What autocannon reports, plus the writes per second this benchmark measures itself. */
interface Result {
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  /**
   * Completed writes ÷ seconds from the first request sent to the last answer
   * received (autocannon's own `duration` ends on its next 1-second tick).
   */
  writesPerSecond: number;
}

/** Sends `amount` writes of `kind` whose texts are `vec:random:<first + i>`. */
async function writeLoad(server: BenchServer, kind: (typeof KINDS)[number], first: number, amount: number): Promise<Result> {
  let next = first;
  let firstSentAt = Number.NaN;
  let lastAnsweredAt = Number.NaN;
  let answered = 0;
  const result = (await autocannon({
    url: `${server.process.url}/functions/v1/agent-memory/mem/write`,
    method: 'POST',
    connections: CONNECTIONS,
    amount,
    headers: { 'content-type': 'application/json', authorization: server.authorization },
    requests: [
      {
        setupRequest: (request: autocannon.Request) => {
          if (next === first) firstSentAt = performance.now();
          const text = dataText('random', next++);
          return { ...request, body: JSON.stringify({ agent_id: 'bench', kind, text, provenance: 'bench', scope: ['self'] }) };
        },
        onResponse: () => {
          answered += 1;
          lastAnsweredAt = performance.now();
        },
      },
    ],
  })) as unknown as Omit<Result, 'writesPerSecond'>;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors`);
  return { ...result, writesPerSecond: answered / ((lastAnsweredAt - firstSentAt) / 1000) };
}

const schema = `b_${randomBytes(6).toString('hex')}`;
const admin = new pg.Client({ connectionString: databaseUrl });
try {
  await admin.connect();
} catch (error) {
  const { code, message } = error as { code?: string; message?: string };
  process.stderr.write(
    `[agentinfra] memory-write-sql needs PostgreSQL with pgvector: cannot connect to ${displayDatabaseUrl(databaseUrl)} ` +
      `(${code ?? message}); set AGENTINFRA_TEST_DATABASE_URL\n`,
  );
  process.exit(1);
}

const embedder = await startEmbeddingServer();
const servers: Array<{ engine: string; server: BenchServer }> = [];
try {
  servers.push({ engine: 'PostgreSQL', server: await startBenchServer({ engine: 'postgres', url: databaseUrl, schema }, embedder.url) });
  servers.push({ engine: 'SQLite', server: await startBenchServer({ engine: 'sqlite' }, embedder.url) });
  const rows: Array<Array<string | number>> = [];
  const verdicts: string[] = [];
  let first = 0;
  for (const { server } of servers) await writeLoad(server, 'semantic', first, WARMUP);
  first += WARMUP;
  for (const kind of KINDS) {
    const results: Result[] = [];
    for (const { engine, server } of servers) {
      process.stderr.write(`[memory-write-sql] ${WRITES} ${kind} writes on ${engine}\n`);
      results.push(await writeLoad(server, kind, first, WRITES));
    }
    first += WRITES;
    const [postgres, sqlite] = results as [Result, Result];
    const ratio = postgres.writesPerSecond / sqlite.writesPerSecond;
    rows.push([
      `/mem/write ${kind}`,
      postgres.writesPerSecond.toFixed(0),
      postgres.latency.p50,
      postgres.latency.p99,
      sqlite.writesPerSecond.toFixed(0),
      sqlite.latency.p50,
      sqlite.latency.p99,
      `${ratio.toFixed(2)}×`,
    ]);
    verdicts.push(`${kind}: PostgreSQL at ${(ratio * 100).toFixed(0)} % of SQLite's throughput`);
  }
  const stored = await admin.query<{ n: string }>(`select count(*) as n from "${schema}".memory_records`);
  const expected = WARMUP + WRITES * KINDS.length;
  if (Number(stored.rows[0]?.n) !== expected) throw new Error(`PostgreSQL holds ${stored.rows[0]?.n} memories, expected ${expected}`);

  process.stdout.write(
    `\n### /mem/write throughput, PostgreSQL vs SQLite (baseline), ${WRITES} writes each, ${CONNECTIONS} connections\n\n`,
  );
  printTable(['write', 'PostgreSQL writes/s', 'p50 ms', 'p99 ms', 'SQLite writes/s', 'p50 ms', 'p99 ms', 'PostgreSQL ÷ SQLite'], rows);
  process.stdout.write(
    `\n${verdicts.join('\n')}\n\nSemantic writes embed 384-dimensional vectors through the OpenAI-compatible stand-in ` +
      `and index them (pgvector HNSW m = 16, ef_construction = 64 / sqlite-vec vec0); tables start empty (${WARMUP} ` +
      `warm-up semantic writes) and hold ${WARMUP + WRITES} semantic memories at the end. ` +
      `Servers, PostgreSQL, the embedder and autocannon share 2 cores.\n`,
  );
} finally {
  for (const { server } of servers) await server.stop();
  await embedder.stop();
  await admin.query(`drop schema if exists "${schema}" cascade`);
  await admin.end();
}
