import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SqlDatabase } from '@agentinfra/core';
import { runVectorIndexContract } from '@agentinfra/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { countedNotesView, recordedVectorReads } from './counted-reads.test-support.js';
import { createSqliteDatabase } from './database.js';
import { createSqliteVectorIndex } from './vector-index.js';

/** Opens a database file in a fresh temporary folder; `close` closes it and deletes the folder. */
async function openDatabaseFolder(): Promise<{ folder: string; open(): SqlDatabase; close(): Promise<void> }> {
  const folder = await mkdtemp(join(tmpdir(), 'agentinfra-vectors-'));
  const opened: SqlDatabase[] = [];
  return {
    folder,
    open() {
      const db = createSqliteDatabase({ filename: join(folder, 'agentinfra.db') });
      opened.push(db);
      return db;
    },
    async close() {
      for (const db of opened) await db.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

runVectorIndexContract({
  name: 'sqlite (sqlite-vec)',
  capabilities: { exact: true },
  async create() {
    const files = await openDatabaseFolder();
    const db = files.open();
    return { index: db.vectorIndex({ table: 'memory_vectors' }), knex: db.knex, cleanup: files.close };
  },
});

describe('createSqliteVectorIndex', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  async function freshFolder() {
    const files = await openDatabaseFolder();
    cleanup = files.close;
    return files;
  }

  const unit = (values: number[]) => {
    const norm = Math.hypot(...values);
    return Float32Array.from(values, (value) => value / norm);
  };
  const own = { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] };

  it('rejects table prefixes that are not plain identifiers', async () => {
    const files = await freshFolder();
    const { knex } = files.open();
    expect(() => createSqliteVectorIndex({ knex, table: 'memory"; drop table x; --' })).toThrow(/identifier/);
    expect(() => createSqliteVectorIndex({ knex, table: '' })).toThrow();
  });

  it('reports a missing ensure() with the index name and the driver error as cause', async () => {
    const files = await freshFolder();
    const index = files.open().vectorIndex({ table: 'memory_vectors' });
    const error = await index.count().then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    expect(error?.message).toMatch(/memory_vectors.*ensure\(\)/);
    expect(error?.cause).toBeInstanceOf(Error);
  });

  it('shares one file between connections: writes of one are seen by the other at once', async () => {
    const files = await freshFolder();
    const first = files.open().vectorIndex({ table: 'memory_vectors' });
    const second = files.open().vectorIndex({ table: 'memory_vectors' });
    await first.ensure({ dimensions: 3 });
    await second.ensure({ dimensions: 3 });
    await first.upsert({ items: [{ id: 'm1', agentId: 'agent-a', scopes: ['self'], vector: unit([1, 0, 0]) }] });
    expect(await second.query({ vector: unit([1, 0, 0]), k: 5, filter: own })).toEqual([{ id: 'm1', score: 1 }]);
    await second.upsert({ items: [{ id: 'm1', agentId: 'agent-a', scopes: ['team:x'], vector: unit([0, 1, 0]) }] });
    expect(await first.query({ vector: unit([1, 0, 0]), k: 5, filter: own })).toEqual([]);
    expect(await second.remove({ ids: ['m1'] })).toBe(1);
    expect(await first.count()).toBe(0);
  });

  it('keeps data across reopening the file', async () => {
    const files = await freshFolder();
    const before = files.open();
    const index = before.vectorIndex({ table: 'memory_vectors' });
    await index.ensure({ dimensions: 2 });
    await index.upsert({ items: [{ id: 'kept', agentId: 'agent-a', scopes: ['self'], vector: unit([1, 1]) }] });
    await before.close();
    const reopened = files.open().vectorIndex({ table: 'memory_vectors' });
    const [hit] = await reopened.query({ vector: unit([1, 0]), k: 1, filter: own });
    expect(hit?.id).toBe('kept');
    expect(hit?.score).toBeCloseTo(Math.SQRT1_2, 6);
  });

  it('answers k beyond sqlite-vec’s KNN limit through the ordered scan, and k = 0 with nothing', async () => {
    const files = await freshFolder();
    const index = files.open().vectorIndex({ table: 'memory_vectors' });
    await index.ensure({ dimensions: 2 });
    const items = Array.from({ length: 30 }, (_, i) => ({
      id: `m${String(i).padStart(2, '0')}`,
      agentId: 'agent-a',
      scopes: ['self'],
      vector: unit([Math.cos(i / 10), Math.sin(i / 10)]),
    }));
    await index.upsert({ items });
    const viaScan = await index.query({ vector: unit([1, 0]), k: 10_000, filter: own });
    const viaKnn = await index.query({ vector: unit([1, 0]), k: 30, filter: own });
    expect(viaScan.map((hit) => hit.id)).toEqual(items.map((item) => item.id));
    expect(viaScan.map((hit) => hit.id)).toEqual(viaKnn.map((hit) => hit.id));
    for (const [i, hit] of viaScan.entries()) expect(hit.score).toBeCloseTo(viaKnn[i]?.score ?? Number.NaN, 6);
    expect(await index.query({ vector: unit([1, 0]), k: 0, filter: own })).toEqual([]);
    await expect(index.query({ vector: unit([1, 0]), k: -1, filter: own })).rejects.toThrow(RangeError);
  });

  it('rejects zero vectors, and drops scope sets no item uses any more', async () => {
    const files = await freshFolder();
    const db = files.open();
    const index = db.vectorIndex({ table: 'memory_vectors' });
    await index.ensure({ dimensions: 2 });
    await expect(
      index.upsert({ items: [{ id: 'zero', agentId: 'agent-a', scopes: ['self'], vector: new Float32Array(2) }] }),
    ).rejects.toThrow(RangeError);
    await index.upsert({
      items: [
        { id: 'a', agentId: 'agent-a', scopes: ['self', 'team:x'], vector: unit([1, 0]) },
        { id: 'b', agentId: 'agent-b', scopes: ['team:x', 'self'], vector: unit([0, 1]) },
        { id: 'c', agentId: 'agent-a', scopes: ['team:x', 'self'], vector: unit([1, 1]) },
      ],
    });
    const sets = async () => Number((await db.knex('memory_vectors_scope_sets').count({ n: '*' }))[0]?.n);
    const keys = async () => Number((await db.knex('memory_vectors_scope_keys').count({ n: '*' }))[0]?.n);
    expect([await sets(), await keys()]).toEqual([2, 4]);
    await index.upsert({ items: [{ id: 'b', agentId: 'agent-b', scopes: ['team:y'], vector: unit([0, 1]) }] });
    expect([await sets(), await keys()]).toEqual([2, 3]);
    await index.remove({ ids: ['a', 'b', 'c'] });
    expect([await sets(), await keys()]).toEqual([0, 0]);
  });

  it('answers a tie wider than its second pass from the two KNN passes, the same on every call, reading no other vectors', async () => {
    const files = await freshFolder();
    const db = files.open();
    const index = db.vectorIndex({ table: 'memory_vectors' });
    await index.ensure({ dimensions: 2 });
    const tied = Array.from({ length: 200 }, (_, i) => ({
      id: `t${String((i * 37) % 200).padStart(3, '0')}`,
      agentId: 'agent-a',
      scopes: ['self'],
      vector: unit([1, 1]),
    }));
    await index.upsert({ items: [...tied, { id: 'z-best', agentId: 'agent-a', scopes: ['self'], vector: unit([1, 1.001]) }] });
    const reads = await recordedVectorReads(db.knex, '"memory_vectors_vectors"');
    const hits = await index.query({ vector: unit([1, 1.001]), k: 3, filter: own });
    expect(hits.map((hit) => hit.id)).toEqual(['z-best', expect.stringMatching(/^t/), expect.stringMatching(/^t/)]);
    const [, second, third] = hits;
    expect(second?.score).toBe(third?.score);
    expect((second?.id ?? '') < (third?.id ?? '')).toBe(true);
    expect(await index.query({ vector: unit([1, 1.001]), k: 3, filter: own })).toEqual(hits);
    // Two KNN passes per query (k + 1 = 4, then 16 neighbours); an ordered scan would read all 201 vectors.
    expect(reads()).toEqual([4, 16, 4, 16]);
  });

  it('reads attached columns for the first pass and the k hits only, however many tied neighbours the search widens to', async () => {
    const files = await freshFolder();
    const db = files.open();
    const index = db.vectorIndex({ table: 'memory_vectors' });
    await index.ensure({ dimensions: 2 });
    const items = Array.from({ length: 50 }, (_, i) => ({
      id: `t${String(i).padStart(2, '0')}`,
      agentId: 'agent-a',
      scopes: ['self'],
      vector: unit([1, 1]),
    }));
    await db.knex.schema.createTable('notes', (table) => {
      table.string('id').primary();
      table.text('text');
    });
    await db.knex('notes').insert(items.map((item) => ({ id: item.id, text: `note ${item.id}` })));
    await index.upsert({ items });
    const reads = await countedNotesView(db.knex);
    const hits = await index.query({
      vector: unit([1, 1]),
      k: 3,
      filter: own,
      attach: { table: 'counted_notes', key: 'id', columns: ['text'] },
    });
    expect(hits).toHaveLength(3);
    for (const hit of hits) expect(hit.row).toEqual({ text: `note ${hit.id}` });
    // The first pass (k + 1 = 4 neighbours, read with their rows) ties at the 3rd place; after the wider pass,
    // only the 3 final hits are read again: 7, not the 16 or 50 the search looked at.
    expect(reads()).toBe(7);
  });
});
