import type { SqlDatabase, VectorIndex } from '@agentinfra/core';
import { keepOpen } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { memoryModule } from './module.js';
import type { MemoryService } from './service.js';
import { createBagOfWordsEmbedder } from './test-support/bag-of-words-embedder.js';
import { createMemoryKernel, type MemoryTestServer, startMemoryTestServer } from './test-support/memory-test-server.js';

/**
 * How `VectorIndex.remove` fails: `fail` before it removes anything or after
 * it removed the vectors, on every call until set back to null; `refuse`,
 * every call naming this id (an index that keeps refusing one vector).
 */
interface RemovalPlan {
  fail: 'before' | 'after' | null;
  refuse?: string;
}

/** `db` whose vector indexes (the real ones) fail their `remove` as `plan` says. */
function withFailingRemoval(db: SqlDatabase, plan: RemovalPlan): SqlDatabase {
  return Object.assign(Object.create(db) as SqlDatabase, {
    vectorIndex(options: { table: string }): VectorIndex {
      const index = db.vectorIndex(options);
      return Object.assign(Object.create(index) as VectorIndex, {
        async remove(removal: { ids: readonly string[] }): Promise<number> {
          if (plan.fail === 'before' || (plan.refuse !== undefined && removal.ids.includes(plan.refuse))) {
            throw new Error('planned failure before removing vectors');
          }
          const removed = await index.remove(removal);
          if (plan.fail === 'after') throw new Error('planned failure after removing vectors');
          return removed;
        },
      });
    },
  });
}

const FORGOTTEN = ['The orchard harvest starts in late September', 'Orchard apples are picked by hand in September'];
const KEPT = 'Standup moved to ten thirty on Mondays';

/** Writes alice's two `orchard` memories ({@link FORGOTTEN}) and one `ops` memory ({@link KEPT}); @returns the latter's id. */
async function writeMemories(t: MemoryTestServer): Promise<string> {
  for (const text of FORGOTTEN) {
    const written = await t.memory(
      'mem/write',
      { agent_id: 'alice', kind: 'semantic', text, provenance: 'orchard', scope: ['self'] },
      'alice',
    );
    expect(written.status).toBe(200);
  }
  const kept = await t.memory(
    'mem/write',
    { agent_id: 'alice', kind: 'semantic', text: KEPT, provenance: 'ops', scope: ['self'] },
    'alice',
  );
  expect(kept.status).toBe(200);
  return kept.body.id as string;
}

/** Forgets alice's `orchard` memories and checks the answer: both deleted. */
async function forgetOrchard(t: MemoryTestServer): Promise<void> {
  const forgotten = await t.memory('mem/forget', { agent_id: 'alice', provenance: 'orchard' }, 'alice');
  expect({ status: forgotten.status, body: forgotten.body }).toEqual({ status: 200, body: { deleted: 2 } });
}

async function countRows(db: SqlDatabase, table: string): Promise<number> {
  return Number((await db.knex(table).count({ n: '*' }).first())?.n);
}

/**
 * /mem/forget removed the vectors before the transaction that deleted the
 * records: a failure between the two left memories that the vector leg of
 * /mem/query no longer found (and a crash left them so). It now deletes the
 * records first, queueing their vectors' removal in the same transaction.
 */
describe.each(sqlDatabases())('/mem/forget when removing vectors fails, on $name', ({ create }) => {
  it('leaves no stored memory without its vector when the failure comes after the vectors went', async () => {
    const { db, cleanup } = await create();
    const plan: RemovalPlan = { fail: null };
    const t = await startMemoryTestServer({ db: withFailingRemoval(db, plan), embedder: createBagOfWordsEmbedder() });
    try {
      const keptId = await writeMemories(t);
      plan.fail = 'after';
      const forgotten = await t.memory('mem/forget', { agent_id: 'alice', provenance: 'orchard' }, 'alice');
      // Forgotten whole: not three memories of which two have no vector.
      expect({
        records: await countRows(db, 'memory_records'),
        vectors: await db.vectorIndex({ table: 'memory_vectors' }).count(),
      }).toEqual({ records: 1, vectors: 1 });
      expect({ status: forgotten.status, body: forgotten.body }).toEqual({ status: 200, body: { deleted: 2 } });
      const found = await t.memory('mem/query', { agent_id: 'alice', q: KEPT, k: 1, scope: ['self'] }, 'alice');
      expect(found.body.hits.map((hit: { id: string }) => hit.id)).toEqual([keptId]);
    } finally {
      await t.server.stop();
      await cleanup();
    }
  });

  it('removes the vectors it could not remove at the next run of its job, with no forget or restart', async () => {
    const { db, cleanup } = await create();
    const plan: RemovalPlan = { fail: null };
    const t = await startMemoryTestServer({ db: withFailingRemoval(db, plan), embedder: createBagOfWordsEmbedder() });
    try {
      await writeMemories(t);
      plan.fail = 'before';
      await forgetOrchard(t);
      expect(await countRows(db, 'memory_vector_removals')).toBe(2);
      const job = memoryModule.jobs?.find((candidate) => candidate.name === 'memory.remove-forgotten-vectors');
      expect(job?.schedule).toEqual({ every: 600_000 });
      const service = t.server.kernel.service<MemoryService>('agent-memory');
      // A run whose signal aborted (its timeout passed) stops and leaves the queue as it is.
      const aborted = new AbortController();
      aborted.abort(new Error('Timed out after 60000 ms.'));
      await expect(job?.run({ payload: null, attempt: 1, scheduledFor: null, signal: aborted.signal, service })).rejects.toThrow(
        'Timed out after 60000 ms.',
      );
      expect(await countRows(db, 'memory_vector_removals')).toBe(2);
      plan.fail = null;
      await job?.run({ payload: null, attempt: 1, scheduledFor: null, signal: new AbortController().signal, service });
      expect({
        vectors: await db.vectorIndex({ table: 'memory_vectors' }).count(),
        queued: await countRows(db, 'memory_vector_removals'),
      }).toEqual({ vectors: 1, queued: 0 });
    } finally {
      await t.server.stop();
      await cleanup();
    }
  });

  it('removes the other queued vectors when the index keeps refusing one, which stays queued', async () => {
    const { db, cleanup } = await create();
    const plan: RemovalPlan = { fail: null };
    const t = await startMemoryTestServer({ db: withFailingRemoval(db, plan), embedder: createBagOfWordsEmbedder() });
    try {
      await writeMemories(t);
      const [refused] = (await db.knex('memory_records').where({ provenance: 'orchard' }).orderBy('id').pluck('id')) as string[];
      plan.refuse = refused;
      await forgetOrchard(t);
      // The forget's own removal is tried once; both stay queued.
      expect(await countRows(db, 'memory_vector_removals')).toBe(2);
      const service = t.server.kernel.service<MemoryService>('agent-memory');
      await service.removeForgottenVectors({ signal: new AbortController().signal });
      expect({
        vectors: await db.vectorIndex({ table: 'memory_vectors' }).count(),
        queued: await db.knex('memory_vector_removals').pluck('id'),
      }).toEqual({ vectors: 2, queued: [refused] });
    } finally {
      await t.server.stop();
      await cleanup();
    }
  });

  it('hides the vectors it could not remove from queries, and removes them at the next start', async () => {
    const { db, cleanup } = await create();
    const plan: RemovalPlan = { fail: null };
    const t = await startMemoryTestServer({ db: withFailingRemoval(keepOpen(db), plan), embedder: createBagOfWordsEmbedder() });
    const restarted = createMemoryKernel({ db: keepOpen(db), embedder: createBagOfWordsEmbedder() });
    try {
      const keptId = await writeMemories(t);
      plan.fail = 'before';
      await forgetOrchard(t);
      expect(await countRows(db, 'memory_records')).toBe(1);
      expect(await db.vectorIndex({ table: 'memory_vectors' }).count()).toBe(3);
      // The two left-over vectors are the nearest to q; they neither appear nor take the one place k = 1 gives.
      const found = await t.memory('mem/query', { agent_id: 'alice', q: FORGOTTEN[0], k: 1, scope: ['self'] }, 'alice');
      expect(found.body.hits.map((hit: { id: string }) => hit.id)).toEqual([keptId]);

      await t.server.stop();
      await restarted.start();
      expect(await db.vectorIndex({ table: 'memory_vectors' }).count()).toBe(1);
      expect(await countRows(db, 'memory_vector_removals')).toBe(0);
    } finally {
      await restarted.stop();
      await t.server.stop();
      await cleanup();
    }
  });
});
