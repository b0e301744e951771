/**
 * SQLite VectorIndex query latency: `createSqliteVectorIndex` (sqlite-vec
 * vec0 KNN, filtered by visibility sets) against a brute-force JavaScript scan
 * over the same Float32Arrays in process memory (baseline), measured in the
 * same run.
 *
 *   npx tsx bench/vector-sqlite.ts            (about a minute on 2 cores)
 *
 * Data: 10 000 and 100 000 random unit vectors of 100 dimensions in a SQLite
 * file (WAL), owned by 20 agents plus a rare one (1% of rows); every row has
 * `self` and `team:everyone`, half of them one of five smaller teams.
 * Queries: random unit vectors, one at a time, k = 10 unless stated.
 * "vs baseline" = index p50 ÷ JS-scan p50 (below 1: the index is faster).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteDatabase } from '../packages/adapter-sqlite/src/index.js';
import type { VectorIndex, VectorItem } from '../packages/core/src/index.js';
import { seededRandom } from '../packages/core/src/testing/seeded-random.js';

const DIMENSIONS = 100;
type Filter = Parameters<VectorIndex['query']>[0]['filter'];

function randomUnitVector(random: () => number): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  let norm = 0;
  for (let i = 0; i < DIMENSIONS; i++) {
    const value = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    vector[i] = value;
    norm += value * value;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < DIMENSIONS; i++) vector[i] = (vector[i] ?? 0) / norm;
  return vector;
}

function makeItems(count: number, random: () => number): VectorItem[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `mem_${i}`,
    agentId: i % 100 === 0 ? 'agent-rare' : `agent-${i % 20}`,
    scopes: ['self', 'team:everyone', ...(i % 2 === 0 ? [`team:t${i % 5}`] : [])],
    vector: randomUnitVector(random),
  }));
}

/**
 * The baseline: every row's visibility checked and dot product computed over
 * one contiguous Float32Array, top k kept in a small sorted array.
 */
function bruteForceScan(matrix: Float32Array, items: readonly VectorItem[], query: Float32Array, k: number, filter: Filter) {
  const top: Array<{ index: number; score: number }> = [];
  for (let row = 0; row < items.length; row++) {
    const item = items[row] as VectorItem;
    const visible =
      (filter.includeSelf && item.agentId === filter.ownerAgentId && item.scopes.includes('self')) ||
      item.scopes.some((scope) => scope.startsWith('team:') && filter.teamScopes.includes(scope));
    if (!visible) continue;
    let score = 0;
    const offset = row * DIMENSIONS;
    for (let j = 0; j < DIMENSIONS; j++) score += (matrix[offset + j] ?? 0) * (query[j] ?? 0);
    if (top.length === k && score <= (top[k - 1]?.score ?? -Infinity)) continue;
    let at = top.length;
    while (at > 0 && (top[at - 1]?.score ?? 0) < score) at--;
    top.splice(at, 0, { index: row, score });
    if (top.length > k) top.pop();
  }
  return top.map(({ index, score }) => ({ id: (items[index] as VectorItem).id, score }));
}

async function timeMs(runs: number, call: () => unknown): Promise<{ p50: number; p99: number }> {
  await call();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const startedAt = performance.now();
    await call();
    samples.push(performance.now() - startedAt);
  }
  samples.sort((a, b) => a - b);
  const at = (fraction: number) => samples[Math.min(samples.length - 1, Math.floor(fraction * samples.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99) };
}

const scenarios: Array<{ label: string; filter: Filter; k: number }> = [
  { label: 'own self (5%)', filter: { ownerAgentId: 'agent-3', includeSelf: true, teamScopes: [] }, k: 10 },
  {
    label: 'own self + one team (15%)',
    filter: { ownerAgentId: 'agent-3', includeSelf: true, teamScopes: ['team:t2'] },
    k: 10,
  },
  { label: 'rare agent (1%)', filter: { ownerAgentId: 'agent-rare', includeSelf: true, teamScopes: [] }, k: 10 },
  {
    label: 'everyone (100%)',
    filter: { ownerAgentId: 'agent-3', includeSelf: true, teamScopes: ['team:everyone'] },
    k: 10,
  },
  {
    label: 'everyone (100%), k = 100',
    filter: { ownerAgentId: 'agent-3', includeSelf: true, teamScopes: ['team:everyone'] },
    k: 100,
  },
];

const lines = [
  '| rows | filter | index p50 ms | index p99 ms | JS scan p50 ms | JS scan p99 ms | vs baseline (p50) |',
  '|---:|---|---:|---:|---:|---:|---:|',
];
const loadLines: string[] = [];

for (const count of [10_000, 100_000]) {
  const random = seededRandom(count);
  const folder = await mkdtemp(join(tmpdir(), 'agentinfra-bench-vectors-'));
  const db = createSqliteDatabase({ filename: join(folder, 'bench.db') });
  try {
    const index = db.vectorIndex({ table: 'memory_vectors' });
    await index.ensure({ dimensions: DIMENSIONS });
    const items = makeItems(count, random);
    const loadStartedAt = performance.now();
    for (let start = 0; start < items.length; start += 1_000) await index.upsert({ items: items.slice(start, start + 1_000) });
    const loadSeconds = (performance.now() - loadStartedAt) / 1000;
    loadLines.push(`- ${count} rows loaded in ${loadSeconds.toFixed(1)} s (${Math.round(count / loadSeconds)} items/s, batches of 1000)`);
    const matrix = new Float32Array(count * DIMENSIONS);
    for (const [row, item] of items.entries()) matrix.set(item.vector, row * DIMENSIONS);
    const runs = count > 50_000 ? 100 : 200;
    const queries = Array.from({ length: runs + 1 }, () => randomUnitVector(random));
    for (const { label, filter, k } of scenarios) {
      let next = 0;
      const indexTimes = await timeMs(runs, () => index.query({ vector: queries[next++ % queries.length] as Float32Array, k, filter }));
      next = 0;
      const scanTimes = await timeMs(runs, () =>
        bruteForceScan(matrix, items, queries[next++ % queries.length] as Float32Array, k, filter),
      );
      lines.push(
        `| ${count} | ${label} | ${indexTimes.p50.toFixed(2)} | ${indexTimes.p99.toFixed(2)} | ${scanTimes.p50.toFixed(2)} | ` +
          `${scanTimes.p99.toFixed(2)} | ${(indexTimes.p50 / scanTimes.p50).toFixed(2)} |`,
      );
    }
  } finally {
    await db.close();
    await rm(folder, { recursive: true, force: true });
  }
}

console.log('## SQLite VectorIndex (sqlite-vec) vs brute-force JS scan, 100 dimensions\n');
console.log(lines.join('\n'));
console.log(`\n${loadLines.join('\n')}`);
