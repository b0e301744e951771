import type { SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBagOfWordsEmbedder } from './test-support/bag-of-words-embedder.js';
import { type MemoryTestServer, startMemoryTestServer } from './test-support/memory-test-server.js';

/**
 * Issue #2 (write throughput): semantic writes are group-committed with their
 * vectors in one transaction, and their ids sort by creation time. These
 * guard what the faster path must keep: every acknowledged write is stored
 * with its vector and found by a query with its record fields.
 */
describe.each(sqlDatabases())('semantic writes on $name (issue #2)', ({ create }) => {
  let t: MemoryTestServer;
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    db = fixture.db;
    cleanup = fixture.cleanup;
    t = await startMemoryTestServer({ db: fixture.db, embedder: createBagOfWordsEmbedder() });
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it('stores 60 concurrent writes with their vectors, each found with its record', async () => {
    const texts = Array.from({ length: 60 }, (_, i) => `concurrent note ${i} about the orchard${i} harvest`);
    const written = await Promise.all(
      texts.map((text, i) =>
        t.memory('mem/write', { agent_id: 'alice', kind: 'semantic', text, provenance: `batch-${i % 3}`, scope: ['self'] }, 'alice'),
      ),
    );
    expect(written.map((response) => response.status)).toEqual(texts.map(() => 200));
    for (const [i, text] of texts.entries()) {
      const found = await t.memory('mem/query', { agent_id: 'alice', q: text, k: 1, scope: ['self'] }, 'alice');
      expect(found.body.hits).toEqual([
        {
          id: written[i]?.body.id,
          text,
          provenance: `batch-${i % 3}`,
          score: expect.any(Number),
          agent_id: 'alice',
          scope: ['self'],
          created_at: written[i]?.body.created_at,
        },
      ]);
    }
    const forgotten = await t.memory('mem/forget', { agent_id: 'alice', provenance: 'batch-0' }, 'alice');
    expect(forgotten.body).toEqual({ deleted: 20 });
    const gone = await t.memory('mem/query', { agent_id: 'alice', q: texts[0], k: 1, scope: ['self'] }, 'alice');
    expect(gone.body.hits[0]?.id).not.toBe(written[0]?.body.id);
  });

  it('stores concurrent episodes together, in fewer inserts than writes, each with its fields', async () => {
    const inserts: string[] = [];
    const onQuery = (query: { sql: string }) => {
      if (/^insert into .memory_records./i.test(query.sql)) inserts.push(query.sql);
    };
    db.knex.on('query', onQuery);
    try {
      const written = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          t.memory('mem/write', { agent_id: 'carol', kind: 'episode', text: `episode ${i}`, provenance: 'run', scope: ['self'] }, 'carol'),
        ),
      );
      expect(written.map((response) => response.status)).toEqual(written.map(() => 200));
      expect(inserts.length).toBeGreaterThan(0);
      // One insert on a quiet host; a loaded one (a full test run beside other work) spreads the writes: 20 of 40 seen.
      expect(inserts.length).toBeLessThan(written.length);
      const rows = await db.knex('memory_records').select('id', 'kind', 'text').where({ agent_id: 'carol' }).orderBy('id');
      expect(rows).toEqual(
        written
          .map((response, i) => ({ id: response.body.id, kind: 'episode', text: `episode ${i}` }))
          .sort((a, b) => (a.id < b.id ? -1 : 1)),
      );
    } finally {
      db.knex.off('query', onQuery);
    }
  });

  it('gives ids that sort by creation time', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await t.memory(
        'mem/write',
        { agent_id: 'bob', kind: 'episode', text: `step ${i}`, provenance: 'order', scope: ['self'] },
        'bob',
      );
      ids.push(response.body.id);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect([...ids].sort()).toEqual(ids);
  });
});
