import { randomBytes } from 'node:crypto';
import type { VectorItem } from '@agentinfra/core';
import { runVectorIndexContract } from '@agentinfra/core/testing';
import { pgvectorAvailability, postgresAvailability, testDatabaseUrl } from '@agentinfra/test-services';
import knexFactory, { type Knex } from 'knex';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgVectorIndex } from './vector-index.js';

const randomName = (prefix: string) => `${prefix}_${randomBytes(6).toString('hex')}`;

/** A knex on `url` whose tables go to `schema`; `setup` runs on every new connection. */
function openKnex(url: string, schema: string, options: { poolMax?: number; setup?: (client: pg.Client) => void } = {}) {
  return knexFactory({
    client: 'pg',
    connection: url,
    searchPath: [schema, 'public'],
    pool: {
      min: 0,
      max: options.poolMax ?? 4,
      afterCreate(client: pg.Client, done: (error: Error | null, client: pg.Client) => void) {
        options.setup?.(client);
        done(null, client);
      },
    },
  });
}

/** Drops what an index with prefix `table` created in the current schema. */
async function dropIndexObjects(knex: Knex, table: string): Promise<void> {
  await knex.raw(`drop function if exists "${table}_search"`);
  await knex.raw(`drop table if exists "${table}_items", "${table}_meta"`);
}

const unit = (values: readonly number[]) => {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (value) => value / norm);
};

/** Deterministic pseudo-random unit vectors (an LCG is enough to spread points). */
function pseudoRandomVectors(count: number, dimensions: number, seed: number): Float32Array[] {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 4_294_967_296 - 0.5;
  };
  return Array.from({ length: count }, () => unit(Array.from({ length: dimensions }, next)));
}

function bruteForceIds(items: readonly VectorItem[], query: Float32Array, k: number, team: string): string[] {
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);
  return items
    .filter((item) => item.scopes.includes(team))
    .map((item) => ({ id: item.id, score: dot(item.vector, query) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, k)
    .map((hit) => hit.id);
}

describe('createPgVectorIndex options', () => {
  it('rejects table prefixes that are not plain identifiers of at most 40 characters, and bad efSearch', () => {
    const knex = knexFactory({ client: 'pg' });
    expect(() => createPgVectorIndex({ knex, table: 'memory"; drop table x; --' })).toThrow(/identifier/);
    expect(() => createPgVectorIndex({ knex, table: 'x'.repeat(41) })).toThrow(/40/);
    expect(() => createPgVectorIndex({ knex, table: 'memory_vectors', efSearch: 0 })).toThrow();
  });
});

describe.runIf(postgresAvailability().available)('createPgVectorIndex on a server with pgvector', () => {
  // #13: the tests that assert HNSW skip without pgvector (one printed line says why); CI fails instead.
  const hnswIt = it.runIf(pgvectorAvailability().available);
  const url = testDatabaseUrl();
  const schema = randomName('t');
  let knex: Knex;

  beforeAll(async () => {
    const admin = openKnex(url, 'public');
    await admin.raw(`create schema "${schema}"`);
    await admin.destroy();
    knex = openKnex(url, schema);
  });

  afterAll(async () => {
    await knex?.raw(`drop schema if exists "${schema}" cascade`);
    await knex?.destroy();
  });

  runVectorIndexContract({
    name: 'postgres (pgvector HNSW)',
    capabilities: { exact: false },
    async create() {
      const table = randomName('v');
      return { index: createPgVectorIndex({ knex, table }), knex, cleanup: () => dropIndexObjects(knex, table) };
    },
  });

  it('creates its own tables even when public holds an index of the same name (search path [schema, public])', async () => {
    const table = randomName('v');
    const inPublic = openKnex(url, 'public');
    try {
      const shadow = createPgVectorIndex({ knex: inPublic, table });
      await shadow.ensure({ dimensions: 3 });
      await shadow.upsert({ items: [{ id: 'public-row', agentId: 'a', scopes: ['self'], vector: new Float32Array([1, 0, 0]) }] });
      const index = createPgVectorIndex({ knex, table });
      await index.ensure({ dimensions: 3 });
      expect(await index.count()).toBe(0);
      await index.upsert({ items: [{ id: 'own-row', agentId: 'a', scopes: ['self'], vector: new Float32Array([0, 1, 0]) }] });
      const hits = await index.query({
        vector: new Float32Array([0, 1, 0]),
        k: 5,
        filter: { ownerAgentId: 'a', includeSelf: true, teamScopes: [] },
      });
      expect(hits.map((hit) => hit.id)).toEqual(['own-row']);
    } finally {
      await dropIndexObjects(inPublic, table);
      await inPublic.destroy();
    }
  });

  it('reports a missing ensure() with the index name and the cause', async () => {
    const error = await createPgVectorIndex({ knex, table: randomName('v') })
      .count()
      .then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
    expect(error?.message).toMatch(/postgres vector index v_[0-9a-f]+: count failed: .*ensure\(\)/);
    expect(error?.cause).toBeInstanceOf(Error);
  });

  hnswIt('stores vector(<dimensions>) with HNSW (vector_cosine_ops) and GIN indexes, and notices nothing', async () => {
    const table = randomName('v');
    const notices: string[] = [];
    const index = createPgVectorIndex({ knex, table, onNotice: (line) => notices.push(line) });
    await index.ensure({ dimensions: 12 });
    const { rows } = await knex.raw(
      `select indexname, indexdef from pg_indexes where schemaname = ? and tablename = ? order by indexname`,
      [schema, `${table}_items`],
    );
    const definitions = (rows as Array<{ indexdef: string }>).map((row) => row.indexdef).join('\n');
    expect(definitions).toMatch(/USING hnsw \(embedding vector_cosine_ops\)/);
    expect(definitions).toMatch(/USING gin \(scope_keys\)/);
    const type = await knex.raw(
      `select format_type(atttypid, atttypmod) as type from pg_attribute
       where attrelid = to_regclass(?) and attname = 'embedding'`,
      [`"${table}_items"`],
    );
    expect(type.rows[0]?.type).toBe('vector(12)');
    expect(notices).toEqual([]);
  });

  hnswIt('goes through HNSW with selective filters and still returns exactly k, falling back to exact when the scan gives up', async () => {
    const table = randomName('v');
    const plans: string[] = [];
    const forced = openKnex(url, schema, {
      poolMax: 1,
      setup: (client) => client.on('notice', (notice) => plans.push(notice.message ?? '')),
    });
    try {
      const index = createPgVectorIndex({ knex: forced, table });
      await index.ensure({ dimensions: 16 });
      const vectors = pseudoRandomVectors(4_000, 16, 7);
      const items: VectorItem[] = vectors.map((vector, i) => ({
        id: `row_${String(i).padStart(4, '0')}`,
        agentId: `agent-${i % 5}`,
        scopes: i % 100 === 3 ? ['team:rare'] : ['team:common'],
        vector,
      }));
      await index.upsert({ items });
      await forced.raw(`analyze "${table}_items"`);
      // Make the planner take the HNSW index even where it would rather sort the GIN matches, and show nested plans.
      await forced.raw('set enable_seqscan = off');
      await forced.raw('set enable_bitmapscan = off');
      await forced.raw(`load 'auto_explain'`);
      await forced.raw('set auto_explain.log_min_duration = 0');
      await forced.raw('set auto_explain.log_nested_statements = on');
      await forced.raw('set client_min_messages = log');

      const [query] = pseudoRandomVectors(1, 16, 99) as [Float32Array];
      const rare = { ownerAgentId: 'agent-0', includeSelf: false, teamScopes: ['team:rare'] };
      plans.length = 0;
      const viaHnsw = await index.query({ vector: query, k: 10, filter: rare });
      const exactQueries = () => plans.filter((plan) => plan.includes('CTE c')).length - 1;
      expect(plans.join('\n')).toContain(`Index Scan using ${table}_items_embedding`);
      expect(exactQueries()).toBe(0);
      expect(viaHnsw).toHaveLength(10);
      const expected = bruteForceIds(items, query, 10, 'team:rare');
      expect(viaHnsw.filter((hit) => expected.includes(hit.id)).length).toBeGreaterThanOrEqual(9);

      // A scan allowed to visit almost nothing finds fewer than k rare rows; the exact query must answer instead.
      await forced.raw('set hnsw.max_scan_tuples = 1');
      const stingy = createPgVectorIndex({ knex: forced, table, efSearch: 1 });
      plans.length = 0;
      const viaFallback = await stingy.query({ vector: query, k: 10, filter: rare });
      expect(plans.join('\n')).toContain(`Index Scan using ${table}_items_embedding`);
      expect(exactQueries()).toBe(1);
      expect(viaFallback.map((hit) => hit.id)).toEqual(expected);
      expect(await index.query({ vector: query, k: 100, filter: rare })).toHaveLength(40);
    } finally {
      await dropIndexObjects(forced, table);
      await forced.destroy();
    }
  });

  it('refuses to reopen an index with other dimensions, also from another instance', async () => {
    const table = randomName('v');
    await createPgVectorIndex({ knex, table }).ensure({ dimensions: 4 });
    const other = createPgVectorIndex({ knex, table });
    await expect(other.ensure({ dimensions: 5 })).rejects.toThrow(RangeError);
    await other.ensure({ dimensions: 4 });
    await other.upsert({ items: [{ id: 'a', agentId: 'agent-a', scopes: ['self'], vector: unit([1, 2, 3, 4]) }] });
    expect(await createPgVectorIndex({ knex, table }).count()).toBe(1);
  });

  it('ensures concurrently from several instances without errors', async () => {
    const table = randomName('v');
    await Promise.all(Array.from({ length: 4 }, () => createPgVectorIndex({ knex, table }).ensure({ dimensions: 3 })));
    expect(await createPgVectorIndex({ knex, table }).count()).toBe(0);
  });
});

describe.runIf(postgresAvailability().available)('createPgVectorIndex where pgvector cannot be created', () => {
  const adminUrl = testDatabaseUrl();
  const database = randomName('t');
  const role = randomName('t');
  const password = randomBytes(12).toString('hex');
  const notices: string[] = [];
  let admin: Knex;
  let knex: Knex;

  beforeAll(async () => {
    admin = openKnex(adminUrl, 'public', { poolMax: 1 });
    await admin.raw(`create role "${role}" login nosuperuser password '${password}'`);
    await admin.raw(`create database "${database}" owner "${role}"`);
    const url = new URL(adminUrl);
    url.username = role;
    url.password = password;
    url.pathname = `/${database}`;
    knex = openKnex(url.toString(), 'public');
  });

  afterAll(async () => {
    await knex?.destroy();
    await admin?.raw(`drop database if exists "${database}" with (force)`);
    await admin?.raw(`drop role if exists "${role}"`);
    await admin?.destroy();
  });

  runVectorIndexContract({
    name: 'postgres (exact bytea fallback)',
    capabilities: { exact: true },
    async create() {
      const table = randomName('v');
      return {
        index: createPgVectorIndex({ knex, table, onNotice: (line) => notices.push(line) }),
        knex,
        cleanup: () => dropIndexObjects(knex, table),
      };
    },
  });

  it('stores bytea and says so in one notice line per index', async () => {
    const table = randomName('v');
    const lines: string[] = [];
    const index = createPgVectorIndex({ knex, table, onNotice: (line) => lines.push(line) });
    await index.ensure({ dimensions: 3 });
    await index.ensure({ dimensions: 3 });
    await index.upsert({ items: [{ id: 'a', agentId: 'agent-a', scopes: ['self'], vector: unit([1, 2, 2]) }] });
    await index.query({
      vector: unit([1, 0, 0]),
      k: 1,
      filter: { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] },
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`pgvector is not usable in this database \\(.*vector.*\\): vector index ${table}`));
    expect(lines[0]).not.toContain(password);
    const type = await knex.raw(
      `select format_type(atttypid, atttypmod) as type from pg_attribute
       where attrelid = to_regclass(?) and attname = 'embedding'`,
      [`"${table}_items"`],
    );
    expect(type.rows[0]?.type).toBe('bytea');
    const { rows } = await knex.raw(`select 1 from pg_extension where extname = 'vector'`);
    expect(rows).toEqual([]);
    expect(notices.length).toBeGreaterThan(0);
  });
});
