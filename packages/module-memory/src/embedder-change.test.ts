import type { SqlDatabase } from '@agentinfra/core';
import { keepOpen } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import type { MemoryService } from './service.js';
import { createBagOfWordsEmbedder } from './test-support/bag-of-words-embedder.js';
import { createMemoryKernel, type MemoryTestServer, startMemoryTestServer } from './test-support/memory-test-server.js';

const MEMORIES = [
  'The user prefers dark mode in the editor',
  'Deploy the billing service every Friday afternoon',
  "Alice's favourite food is sushi",
  'The staging database password rotates monthly',
  'Standup moved to ten thirty on Mondays',
  'Use pnpm, not npm, in this repository',
];

/** Writes each of {@link MEMORIES} for alice with its own provenance, `p0` to `p5`. */
async function writeEachWithItsProvenance(t: MemoryTestServer): Promise<void> {
  for (const [index, text] of MEMORIES.entries()) {
    const written = await t.memory(
      'mem/write',
      { agent_id: 'alice', kind: 'semantic', text, provenance: `p${index}`, scope: ['self'] },
      'alice',
    );
    expect(written.status).toBe(200);
  }
}

async function countRows(db: SqlDatabase, table: string): Promise<number> {
  return Number((await db.knex(table).count({ n: '*' }).first())?.n);
}

describe.each(sqlDatabases())('embedder change on $name', ({ create }) => {
  it('refuses to start with another embedder while semantic memories exist; reembed resumes after a failure and fixes it', async () => {
    const { db, cleanup } = await create();
    const first = createBagOfWordsEmbedder({ id: 'test-bow-a', dimensions: 64 });
    const t = await startMemoryTestServer({ db, embedder: first });
    const next = createBagOfWordsEmbedder({ id: 'test-bow-b', dimensions: 96 });
    // Kernels beside the test server share its database: only the test server's stop() may close it.
    const kernel = createMemoryKernel({ db: keepOpen(db), embedder: next, memoryConfig: { reembedBatchSize: 2 } });
    try {
      const ids: string[] = [];
      for (const text of MEMORIES) {
        const written = await t.memory(
          'mem/write',
          { agent_id: 'alice', kind: 'semantic', text, provenance: 'p', scope: ['self'] },
          'alice',
        );
        ids.push(written.body.id);
      }
      await t.memory('mem/write', { agent_id: 'alice', kind: 'episode', text: 'an episode', provenance: 'p', scope: ['self'] }, 'alice');

      await expect(kernel.start()).rejects.toThrow(
        'the memory store was embedded with test-bow-a (64 dimensions, 6 semantic memories); the server is configured with test-bow-b (96 dimensions); run `agentinfra migrate --reembed`',
      );
      const service = kernel.service<MemoryService>('agent-memory');
      expect(await service.embeddingStatus()).toEqual({
        storedEmbedderId: 'test-bow-a',
        storedDimensions: 64,
        configuredEmbedderId: 'test-bow-b',
        configuredDimensions: 96,
        semanticMemories: 6,
        reembedNeeded: true,
        pendingReembed: null,
      });

      next.failAfterCalls = 1;
      const progress: Array<[number, number]> = [];
      const onProgress = (done: number, total: number) => progress.push([done, total]);
      await expect(service.reembed({ onProgress })).rejects.toThrow('The embedder test-bow-b failed on 2 text(s).');
      expect(progress).toEqual([
        [0, 6],
        [2, 6],
      ]);
      expect((await service.embeddingStatus()).pendingReembed).toEqual({ embedderId: 'test-bow-b', done: 2 });
      await expect(kernel.start()).rejects.toThrow('(an interrupted re-embed with test-bow-b will resume)');

      next.failAfterCalls = null;
      next.calls = 0;
      progress.length = 0;
      const result = await service.reembed({ onProgress });
      expect(result).toEqual({
        embedderId: 'test-bow-b',
        dimensions: 96,
        total: 6,
        embedded: 4,
        resumed: true,
        previousIndexCleared: true,
      });
      expect(next.calls).toBe(2);
      expect(progress).toEqual([
        [2, 6],
        [4, 6],
        [6, 6],
      ]);
      expect(await db.vectorIndex({ table: 'memory_vectors' }).count()).toBe(0);
      expect(await db.vectorIndex({ table: 'memory_vectors_g1' }).count()).toBe(6);
      expect(await countRows(db, 'memory_records')).toBe(7);

      await kernel.start();
      const { url } = await kernel.listen({ port: 0, host: '127.0.0.1' });
      const response = await fetch(`${url}/functions/v1/agent-memory/mem/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.keys.alice}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agent_id: 'alice', q: 'which colour theme does the customer like in the IDE?', k: 3 }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { hits: Array<{ id: string }> };
      expect(body.hits.map((hit) => hit.id)[0]).toBe(ids[0]);

      expect((await service.reembed()).embedded).toBe(0);
      const forced = await service.reembed({ force: true });
      expect(forced).toMatchObject({ embedded: 6, resumed: false });
      expect(await db.vectorIndex({ table: 'memory_vectors_g2' }).count()).toBe(6);
      expect(await db.vectorIndex({ table: 'memory_vectors_g1' }).count()).toBe(0);

      const back = createMemoryKernel({ db: keepOpen(db), embedder: createBagOfWordsEmbedder({ id: 'test-bow-a', dimensions: 64 }) });
      await expect(back.start()).rejects.toThrow('the memory store was embedded with test-bow-b');
    } finally {
      await kernel.stop();
      await t.server.stop();
      await cleanup();
    }
  });

  // /mem/forget removed vectors from the active index only: the resumed re-embed made its index, which
  // still held the forgotten memories' vectors, the active one.
  it('forgets memories from the index of an interrupted re-embed too', async () => {
    const { db, cleanup } = await create();
    const t = await startMemoryTestServer({ db, embedder: createBagOfWordsEmbedder({ id: 'test-bow-a', dimensions: 64 }) });
    const next = createBagOfWordsEmbedder({ id: 'test-bow-b', dimensions: 96 });
    const kernel = createMemoryKernel({ db: keepOpen(db), embedder: next, memoryConfig: { reembedBatchSize: 2 } });
    try {
      await writeEachWithItsProvenance(t);
      const service = kernel.service<MemoryService>('agent-memory');
      next.failAfterCalls = 1;
      await expect(service.reembed()).rejects.toThrow('The embedder test-bow-b failed');
      expect(await db.vectorIndex({ table: 'memory_vectors_g1' }).count()).toBe(2);

      const first = (await db.knex('memory_records').select('provenance').orderBy('id').first()) as { provenance: string };
      expect((await t.memory('mem/forget', { agent_id: 'alice', provenance: first.provenance }, 'alice')).body).toEqual({ deleted: 1 });
      expect(await db.vectorIndex({ table: 'memory_vectors_g1' }).count()).toBe(1);

      next.failAfterCalls = null;
      expect(await service.reembed()).toMatchObject({ resumed: true, total: 5 });
      expect(await db.vectorIndex({ table: 'memory_vectors_g1' }).count()).toBe(5);
    } finally {
      await kernel.stop();
      await t.server.stop();
      await cleanup();
    }
  });

  // Review: a memory forgotten while a running re-embed embedded its batch got its vector back in the new index.
  it('leaves no vector of a memory forgotten while a running re-embed embeds it', async () => {
    const { db, cleanup } = await create();
    const t = await startMemoryTestServer({ db, embedder: createBagOfWordsEmbedder({ id: 'test-bow-a', dimensions: 64 }) });
    const next = createBagOfWordsEmbedder({ id: 'test-bow-b', dimensions: 96 });
    const kernel = createMemoryKernel({ db: keepOpen(db), embedder: next, memoryConfig: { reembedBatchSize: 10 } });
    try {
      await writeEachWithItsProvenance(t);
      let release = () => {};
      next.hold = new Promise<void>((resolve) => (release = resolve));
      const reembed = kernel.service<MemoryService>('agent-memory').reembed();
      await expect
        .poll(async () => (await t.server.kernel.service<MemoryService>('agent-memory').embeddingStatus()).pendingReembed)
        .not.toBeNull();
      expect((await t.memory('mem/forget', { agent_id: 'alice', provenance: 'p2' }, 'alice')).body).toEqual({ deleted: 1 });
      release();
      expect(await reembed).toMatchObject({ embedded: 6 });
      expect(await db.vectorIndex({ table: 'memory_vectors_g1' }).count()).toBe(5);
    } finally {
      await kernel.stop();
      await t.server.stop();
      await cleanup();
    }
  });

  it('adopts another embedder when the store holds no semantic memories', async () => {
    const { db, cleanup } = await create();
    const t = await startMemoryTestServer({ db, embedder: createBagOfWordsEmbedder({ id: 'test-bow-a', dimensions: 64 }) });
    const kernel = createMemoryKernel({ db: keepOpen(db), embedder: createBagOfWordsEmbedder({ id: 'test-bow-c', dimensions: 32 }) });
    try {
      await t.memory('mem/write', { agent_id: 'bob', kind: 'episode', text: 'only an episode', provenance: 'p', scope: ['self'] }, 'bob');
      await kernel.start();
      const service = kernel.service<MemoryService>('agent-memory');
      expect(await service.embeddingStatus()).toMatchObject({ storedEmbedderId: 'test-bow-c', storedDimensions: 32, reembedNeeded: false });
      const written = await service.write({
        agent_id: 'bob',
        kind: 'semantic',
        text: 'pnpm workspace notes',
        provenance: 'p',
        scope: ['self'],
      });
      const found = await service.query({ agent_id: 'bob', q: 'pnpm workspace', k: 5, scope: ['self'] });
      expect(found.hits[0]?.id).toBe(written.id);
      expect(await db.vectorIndex({ table: 'memory_vectors_g1' }).count()).toBe(1);
    } finally {
      await kernel.stop();
      await t.server.stop();
      await cleanup();
    }
  });
});
