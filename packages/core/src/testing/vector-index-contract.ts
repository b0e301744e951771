import type { Knex } from 'knex';
import { afterEach, describe, expect, it } from 'vitest';
import type { VectorHit, VectorIndex, VectorItem } from '../ports/vector-index.js';
import { seededRandom } from './seeded-random.js';

/** What an adapter's vector search guarantees; the suite branches on these, never on adapter names. */
export interface VectorIndexCapabilities {
  /**
   * `true`: results equal a brute-force scan (same ids, scores within 1e-5,
   * ties broken by id). `false` (approximate, e.g. HNSW): recall@10 ≥ 0.95
   * against the brute-force scan, still exactly `min(k, matching items)` hits.
   */
  exact: boolean;
}

/** Options of {@link runVectorIndexContract}. */
export interface VectorIndexContractOptions {
  /** Name of the implementation, shown in the test titles. */
  name: string;
  /**
   * A fresh, empty index (not yet ensured) over its own storage; called once
   * per test. `knex` reaches the same database (the suite creates the
   * companion table of `insert` and `attach` with it, and drops it).
   * `cleanup` runs after the test and drops what the index created.
   */
  create: () => Promise<{ index: VectorIndex; knex: Knex; cleanup(): Promise<void> }>;
  capabilities: VectorIndexCapabilities;
}

/** The visibility filter of {@link VectorIndex.query}. */
type VisibilityFilter = Parameters<VectorIndex['query']>[0]['filter'];

/** Largest difference tolerated between a returned score and the brute-force cosine. */
const SCORE_TOLERANCE = 1e-5;

/** A unit vector of `dimensions` drawn uniformly on the sphere (Box–Muller normals, then normalised). */
function randomUnitVector(random: () => number, dimensions: number): Float32Array {
  const values = new Float64Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    const value = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    values[i] = value;
    norm += value * value;
  }
  norm = Math.sqrt(norm);
  return Float32Array.from(values, (value) => value / norm);
}

/** `values` scaled to unit length, as float32. */
function unit(values: readonly number[]): Float32Array {
  const norm = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0));
  return Float32Array.from(values, (value) => value / norm);
}

/** Cosine similarity computed in float64. */
function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return dot / Math.sqrt(normA * normB);
}

/** The port's visibility rule, written plainly: own `self` rows, or any shared `team:` scope. */
function isVisible(item: VectorItem, filter: VisibilityFilter): boolean {
  if (filter.includeSelf && item.agentId === filter.ownerAgentId && item.scopes.includes('self')) return true;
  return item.scopes.some((scope) => scope.startsWith('team:') && filter.teamScopes.includes(scope));
}

/** Brute-force top-k: every visible item scored, best first, ties by ascending id. */
function bruteForce(items: readonly VectorItem[], vector: Float32Array, k: number, filter: VisibilityFilter): VectorHit[] {
  return items
    .filter((item) => isVisible(item, filter))
    .map((item) => ({ id: item.id, score: cosine(item.vector, vector) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, k);
}

/** Asserts the ordering every adapter guarantees: scores non-increasing, equal scores by ascending id, no repeats. */
function expectRanked(hits: readonly VectorHit[]): void {
  expect(new Set(hits.map((hit) => hit.id)).size).toBe(hits.length);
  for (let i = 1; i < hits.length; i++) {
    const previous = hits[i - 1] as VectorHit;
    const current = hits[i] as VectorHit;
    expect(current.score).toBeLessThanOrEqual(previous.score);
    if (current.score === previous.score) expect(previous.id < current.id).toBe(true);
  }
}

/**
 * Asserts that `hits` answer the query like `reference` (the brute-force
 * top-k): same length, every hit visible with its true cosine as score; exact
 * adapters return the same ids in the same order (a swap is tolerated only
 * between items whose true scores differ by less than the score tolerance).
 * @returns the overlap with the reference's first ten ids (for recall@10).
 */
function compareWithReference(
  hits: readonly VectorHit[],
  reference: readonly VectorHit[],
  byId: ReadonlyMap<string, VectorItem>,
  query: { vector: Float32Array; filter: VisibilityFilter },
  exact: boolean,
): { found: number; expected: number } {
  expect(hits.length).toBe(reference.length);
  expectRanked(hits);
  hits.forEach((hit, position) => {
    const item = byId.get(hit.id);
    expect(item, `hit ${hit.id} is not an indexed item`).toBeDefined();
    if (item === undefined) return;
    expect(isVisible(item, query.filter), `hit ${hit.id} is not visible under the filter`).toBe(true);
    const trueScore = cosine(item.vector, query.vector);
    expect(Math.abs(hit.score - trueScore)).toBeLessThanOrEqual(SCORE_TOLERANCE);
    if (exact) {
      const expected = reference[position] as VectorHit;
      if (hit.id !== expected.id) expect(Math.abs(trueScore - expected.score)).toBeLessThanOrEqual(SCORE_TOLERANCE);
      expect(Math.abs(hit.score - expected.score)).toBeLessThanOrEqual(SCORE_TOLERANCE);
    }
  });
  const topReference = new Set(reference.slice(0, 10).map((hit) => hit.id));
  const found = hits.slice(0, 10).filter((hit) => topReference.has(hit.id)).length;
  return { found, expected: topReference.size };
}

/**
 * The behaviour every {@link VectorIndex} guarantees (vitest `describe`/`it`):
 * `ensure` is idempotent and refuses other dimensions later; `upsert` inserts
 * and replaces by id (the last duplicate in one call wins); `remove` counts
 * what it deleted; `count` follows; queries honour the visibility rule (own
 * `self` rows, or a shared `team:` scope; other agents' `self` rows and
 * non-`team:` filter entries never match); scores are cosine similarity, best
 * first, equal scores by ascending id, repeatable; results match a brute-force
 * scan on random vectors (exact: identical; approximate: recall@10 ≥ 0.95)
 * for several `k`, including `k` above the number of matches and a filter
 * matching 1% of the rows, always returning exactly `min(k, matches)` hits;
 * vectors of the wrong dimension reject in `upsert` and `query` without
 * writing anything.
 */
export function runVectorIndexContract(options: VectorIndexContractOptions): void {
  const { exact } = options.capabilities;
  let cleanups: Array<() => Promise<void>> = [];

  async function open(dimensions: number): Promise<VectorIndex> {
    return (await openWithKnex(dimensions)).index;
  }

  async function openWithKnex(dimensions: number): Promise<{ index: VectorIndex; knex: Knex }> {
    const { index, knex, cleanup } = await options.create();
    cleanups.push(cleanup);
    await index.ensure({ dimensions });
    return { index, knex };
  }

  /** Creates the companion table `records` (`id` primary key, `label`, `n`) next to the index; dropped after the test. */
  async function openWithRecords(dimensions: number): Promise<{ index: VectorIndex; records: string }> {
    const { index, knex } = await openWithKnex(dimensions);
    const table = `contract_records_${Math.floor(Math.random() * 1e9)}`;
    await knex.schema.createTable(table, (builder) => {
      builder.string('id', 64).primary();
      builder.string('label', 64).notNullable();
      builder.integer('n').nullable();
    });
    cleanups.push(() => knex.schema.dropTableIfExists(table));
    return { index, records: table };
  }

  describe(`VectorIndex contract: ${options.name}`, () => {
    afterEach(async () => {
      const pending = cleanups;
      cleanups = [];
      for (const cleanup of pending.reverse()) await cleanup();
    });

    it('starts empty, and ensure is idempotent but refuses other dimensions', async () => {
      const index = await open(8);
      await index.ensure({ dimensions: 8 });
      expect(await index.count()).toBe(0);
      const filter = { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: ['team:x'] };
      expect(await index.query({ vector: unit([1, 0, 0, 0, 0, 0, 0, 0]), k: 5, filter })).toEqual([]);
      await expect(index.ensure({ dimensions: 9 })).rejects.toThrow();
    });

    it('inserts, replaces by id and removes, counting what it removed', async () => {
      const index = await open(4);
      const self = ['self'];
      await index.upsert({
        items: [
          { id: 'm1', agentId: 'agent-a', scopes: self, vector: unit([1, 0, 0, 0]) },
          { id: 'm2', agentId: 'agent-a', scopes: self, vector: unit([0, 1, 0, 0]) },
          { id: 'm3', agentId: 'agent-a', scopes: self, vector: unit([0, 0, 1, 0]) },
        ],
      });
      await index.upsert({ items: [] });
      expect(await index.count()).toBe(3);
      const own = { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] };
      const team = { ownerAgentId: 'agent-b', includeSelf: false, teamScopes: ['team:x'] };

      await index.upsert({ items: [{ id: 'm1', agentId: 'agent-a', scopes: ['team:x'], vector: unit([0, 0, 0, 1]) }] });
      expect(await index.count()).toBe(3);
      const [best] = await index.query({ vector: unit([0, 0, 0, 1]), k: 1, filter: team });
      expect(best?.id).toBe('m1');
      expect(best?.score).toBeCloseTo(1, 5);
      expect((await index.query({ vector: unit([1, 0, 0, 0]), k: 10, filter: own })).map((hit) => hit.id).sort()).toEqual(['m2', 'm3']);

      await index.upsert({
        items: [
          { id: 'm4', agentId: 'agent-a', scopes: self, vector: unit([1, 1, 0, 0]) },
          { id: 'm4', agentId: 'agent-a', scopes: self, vector: unit([0, 0, 1, 1]) },
        ],
      });
      expect(await index.count()).toBe(4);
      const [latest] = await index.query({ vector: unit([0, 0, 1, 1]), k: 1, filter: own });
      expect(latest).toMatchObject({ id: 'm4' });
      expect(latest?.score).toBeCloseTo(1, 5);

      expect(await index.remove({ ids: ['m1', 'm3', 'unknown'] })).toBe(2);
      expect(await index.remove({ ids: ['m1'] })).toBe(0);
      expect(await index.remove({ ids: [] })).toBe(0);
      expect(await index.count()).toBe(2);
      expect(await index.query({ vector: unit([0, 0, 0, 1]), k: 5, filter: team })).toEqual([]);
      expect((await index.query({ vector: unit([0, 1, 0, 0]), k: 5, filter: own })).map((hit) => hit.id)).toEqual(['m2', 'm4']);
    });

    it('shows own self rows and shared team rows, never other agents’ self rows', async () => {
      const index = await open(4);
      const items: VectorItem[] = [
        { id: 'a-self', agentId: 'agent-a', scopes: ['self'] },
        { id: 'a-team-x', agentId: 'agent-a', scopes: ['team:x'] },
        { id: 'a-both', agentId: 'agent-a', scopes: ['self', 'team:x'] },
        { id: 'b-self', agentId: 'agent-b', scopes: ['self'] },
        { id: 'b-team-x', agentId: 'agent-b', scopes: ['team:x'] },
        { id: 'b-team-y', agentId: 'agent-b', scopes: ['team:y'] },
        { id: 'b-team-xy', agentId: 'agent-b', scopes: ['self', 'team:xy'] },
        { id: 'b-none', agentId: 'agent-b', scopes: [] },
      ].map((item, i) => ({ ...item, vector: unit([1, i / 8, 0.5, -0.25]) }));
      await index.upsert({ items });
      const visible = async (filter: VisibilityFilter) =>
        (await index.query({ vector: unit([1, 0, 0, 0]), k: 100, filter })).map((hit) => hit.id).sort();

      expect(await visible({ ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] })).toEqual(['a-both', 'a-self']);
      expect(await visible({ ownerAgentId: 'agent-a', includeSelf: false, teamScopes: ['team:x'] })).toEqual([
        'a-both',
        'a-team-x',
        'b-team-x',
      ]);
      expect(await visible({ ownerAgentId: 'agent-a', includeSelf: true, teamScopes: ['team:x', 'team:y'] })).toEqual([
        'a-both',
        'a-self',
        'a-team-x',
        'b-team-x',
        'b-team-y',
      ]);
      expect(await visible({ ownerAgentId: 'agent-b', includeSelf: true, teamScopes: [] })).toEqual(['b-self', 'b-team-xy']);
      expect(await visible({ ownerAgentId: 'agent-a', includeSelf: false, teamScopes: [] })).toEqual([]);
      expect(await visible({ ownerAgentId: 'agent-a', includeSelf: false, teamScopes: ['self'] })).toEqual([]);
      expect(await visible({ ownerAgentId: 'agent-c', includeSelf: true, teamScopes: ['team:y', 'team:z'] })).toEqual(['b-team-y']);
    });

    it('scores by cosine similarity, best first', async () => {
      const index = await open(3);
      await index.upsert({
        items: [
          { id: 'same', vector: unit([1, 0, 0]) },
          { id: 'diagonal', vector: unit([1, 1, 0]) },
          { id: 'orthogonal', vector: unit([0, 0, 1]) },
          { id: 'opposite', vector: unit([-1, 0, 0]) },
          { id: 'obtuse', vector: unit([-1, 1, 0]) },
        ].map((item) => ({ ...item, agentId: 'agent-a', scopes: ['self'] })),
      });
      const hits = await index.query({
        vector: unit([1, 0, 0]),
        k: 10,
        filter: { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] },
      });
      expect(hits.map((hit) => hit.id)).toEqual(['same', 'diagonal', 'orthogonal', 'obtuse', 'opposite']);
      const expected = [1, Math.SQRT1_2, 0, -Math.SQRT1_2, -1];
      for (const [i, hit] of hits.entries()) {
        expect(Math.abs(hit.score - (expected[i] ?? Number.NaN))).toBeLessThanOrEqual(SCORE_TOLERANCE);
      }
    });

    it(`matches a brute-force scan on random vectors (${exact ? 'identical results' : 'recall@10 ≥ 0.95'})`, async () => {
      const dimensions = 32;
      const random = seededRandom(20_261_122);
      const index = await open(dimensions);
      const agents = ['agent-0', 'agent-1', 'agent-2', 'agent-3', 'agent-4', 'agent-5'];
      const teams = ['team:red', 'team:green', 'team:blue'];
      const items: VectorItem[] = Array.from({ length: 1_200 }, (_, i) => {
        const scopes = [...(random() < 0.7 ? ['self'] : []), ...teams.filter(() => random() < 0.25)];
        return {
          id: `mem_${String(i).padStart(5, '0')}`,
          agentId: agents[i % agents.length] as string,
          scopes,
          vector: randomUnitVector(random, dimensions),
        };
      });
      for (let start = 0; start < items.length; start += 250) await index.upsert({ items: items.slice(start, start + 250) });
      expect(await index.count()).toBe(items.length);
      const byId = new Map(items.map((item) => [item.id, item]));
      const filters: VisibilityFilter[] = [
        { ownerAgentId: 'agent-1', includeSelf: true, teamScopes: [] },
        { ownerAgentId: 'agent-2', includeSelf: true, teamScopes: ['team:red'] },
        { ownerAgentId: 'agent-3', includeSelf: false, teamScopes: ['team:green', 'team:blue'] },
        { ownerAgentId: 'agent-4', includeSelf: true, teamScopes: [...teams] },
        { ownerAgentId: 'nobody', includeSelf: true, teamScopes: ['team:blue'] },
      ];
      let found = 0;
      let expected = 0;
      for (const filter of filters) {
        const matching = items.filter((item) => isVisible(item, filter)).length;
        for (const k of [1, 7, 10, 25, matching + 40]) {
          const vector = randomUnitVector(random, dimensions);
          const hits = await index.query({ vector, k, filter });
          const reference = bruteForce(items, vector, k, filter);
          expect(reference.length).toBe(Math.min(k, matching));
          const overlap = compareWithReference(hits, reference, byId, { vector, filter }, exact);
          found += overlap.found;
          expected += overlap.expected;
        }
      }
      expect(found / expected).toBeGreaterThanOrEqual(exact ? 1 : 0.95);
    });

    it('returns exactly k hits when only 1% of the rows match', async () => {
      const dimensions = 16;
      const random = seededRandom(4_242);
      const index = await open(dimensions);
      const items: VectorItem[] = Array.from({ length: 3_000 }, (_, i) => {
        const rare = i % 100 === 37;
        return {
          id: `row_${String(i).padStart(5, '0')}`,
          agentId: rare ? 'agent-rare' : `agent-${i % 7}`,
          scopes: rare && i % 200 === 37 ? ['self', 'team:rare'] : ['self', 'team:common'],
          vector: randomUnitVector(random, dimensions),
        };
      });
      for (let start = 0; start < items.length; start += 500) await index.upsert({ items: items.slice(start, start + 500) });
      const byId = new Map(items.map((item) => [item.id, item]));
      const filters: VisibilityFilter[] = [
        { ownerAgentId: 'agent-rare', includeSelf: true, teamScopes: [] },
        { ownerAgentId: 'agent-0', includeSelf: false, teamScopes: ['team:rare'] },
      ];
      let found = 0;
      let expected = 0;
      for (const filter of filters) {
        const matching = items.filter((item) => isVisible(item, filter)).length;
        expect(matching / items.length).toBeLessThanOrEqual(0.01);
        for (const k of [10, matching, matching + 5]) {
          for (let round = 0; round < 3; round++) {
            const vector = randomUnitVector(random, dimensions);
            const hits = await index.query({ vector, k, filter });
            expect(hits).toHaveLength(Math.min(k, matching));
            const overlap = compareWithReference(hits, bruteForce(items, vector, k, filter), byId, { vector, filter }, exact);
            found += overlap.found;
            expected += overlap.expected;
          }
        }
      }
      expect(found / expected).toBeGreaterThanOrEqual(exact ? 1 : 0.95);
    });

    it('orders equal scores by id, the same way on every call', async () => {
      const index = await open(4);
      const tied = unit([1, 2, 3, 4]);
      const ids = ['tie-e', 'tie-b', 'tie-f', 'tie-a', 'tie-d', 'tie-c'];
      await index.upsert({
        items: [
          ...ids.map((id) => ({ id, agentId: 'agent-a', scopes: ['self'], vector: tied })),
          { id: 'near', agentId: 'agent-a', scopes: ['self'], vector: unit([1, 2, 3, 5]) },
          { id: 'far', agentId: 'agent-a', scopes: ['self'], vector: unit([-4, 3, -2, 1]) },
        ],
      });
      const filter = { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] };
      const all = await index.query({ vector: tied, k: 10, filter });
      expect(all.map((hit) => hit.id)).toEqual(['tie-a', 'tie-b', 'tie-c', 'tie-d', 'tie-e', 'tie-f', 'near', 'far']);
      expectRanked(all);
      const firstThree = await index.query({ vector: tied, k: 3, filter });
      if (exact) expect(firstThree.map((hit) => hit.id)).toEqual(['tie-a', 'tie-b', 'tie-c']);
      expect(firstThree).toHaveLength(3);
      expectRanked(firstThree);
      for (const hit of firstThree) expect(hit.id.startsWith('tie-')).toBe(true);
      for (let round = 0; round < 3; round++) expect(await index.query({ vector: tied, k: 3, filter })).toEqual(firstThree);
    });

    it('rejects vectors of the wrong dimension in upsert and query, writing nothing', async () => {
      const index = await open(8);
      const good = { id: 'good', agentId: 'agent-a', scopes: ['self'], vector: unit([1, 0, 0, 0, 0, 0, 0, 0]) };
      const short = { id: 'short', agentId: 'agent-a', scopes: ['self'], vector: unit([1, 0, 0, 0, 0, 0, 0]) };
      await expect(index.upsert({ items: [good, short] })).rejects.toThrow();
      expect(await index.count()).toBe(0);
      await index.upsert({ items: [good] });
      const filter = { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] };
      await expect(index.query({ vector: unit([1, 0, 0, 0, 0, 0, 0, 0, 0]), k: 1, filter })).rejects.toThrow();
      await expect(index.query({ vector: unit([1, 0, 0]), k: 1, filter })).rejects.toThrow();
      expect(await index.count()).toBe(1);
    });

    it('stores rows of another table in the same transaction as the items, or neither', async () => {
      const { index, records } = await openWithRecords(4);
      const filter = { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] };
      const item = (id: string, vector: number[]) => ({ id, agentId: 'agent-a', scopes: ['self'], vector: unit(vector) });
      await index.upsert({
        items: [item('a', [1, 0, 0, 0]), item('b', [0, 1, 0, 0])],
        insert: {
          table: records,
          rows: [
            { id: 'a', label: 'first', n: 1 },
            { id: 'b', label: 'second', n: null },
          ],
        },
      });
      await index.upsert({ items: [], insert: { table: records, rows: [{ id: 'plain', label: 'no vector', n: 3 }] } });
      const attach = { table: records, key: 'id', columns: ['label', 'n'] };
      const hits = await index.query({ vector: unit([1, 0.1, 0, 0]), k: 5, filter, attach });
      expect(hits.map((hit) => [hit.id, hit.row])).toEqual([
        ['a', { label: 'first', n: 1 }],
        ['b', { label: 'second', n: null }],
      ]);

      const duplicate = index.upsert({
        items: [item('c', [0, 0, 1, 0])],
        insert: { table: records, rows: [{ id: 'a', label: 'again', n: 2 }] },
      });
      await expect(duplicate).rejects.toThrow();
      expect(await index.count()).toBe(2);
      expect((await index.query({ vector: unit([0, 0, 1, 0]), k: 5, filter })).map((hit) => hit.id).sort()).toEqual(['a', 'b']);
      const [first] = await index.query({ vector: unit([1, 0, 0, 0]), k: 1, filter, attach });
      expect(first?.row).toEqual({ label: 'first', n: 1 });
    });

    it('attaches nothing to a hit whose row is missing, and refuses malformed inserts and attachments', async () => {
      const { index, records } = await openWithRecords(4);
      const filter = { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] };
      const lone = { id: 'lone', agentId: 'agent-a', scopes: ['self'], vector: unit([1, 1, 0, 0]) };
      await index.upsert({ items: [lone] });
      const [hit] = await index.query({
        vector: unit([1, 1, 0, 0]),
        k: 1,
        filter,
        attach: { table: records, key: 'id', columns: ['label'] },
      });
      expect(hit?.id).toBe('lone');
      expect(hit?.row).toBeUndefined();

      const other = { ...lone, id: 'other' };
      await expect(
        index.upsert({ items: [other], insert: { table: `${records}"; --`, rows: [{ id: 'x', label: 'x', n: 1 }] } }),
      ).rejects.toThrow(RangeError);
      await expect(
        index.upsert({
          items: [other],
          insert: {
            table: records,
            rows: [
              { id: 'x', label: 'x', n: 1 },
              { id: 'y', label: 'y' },
            ],
          },
        }),
      ).rejects.toThrow(RangeError);
      await expect(
        index.query({ vector: unit([1, 0, 0, 0]), k: 1, filter, attach: { table: records, key: 'id', columns: ['label x'] } }),
      ).rejects.toThrow(RangeError);
      expect(await index.count()).toBe(1);
    });
  });
}
