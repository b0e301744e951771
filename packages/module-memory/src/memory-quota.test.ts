import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBagOfWordsEmbedder } from './test-support/bag-of-words-embedder.js';
import { type MemoryTestServer, startMemoryTestServer } from './test-support/memory-test-server.js';

describe.each(sqlDatabases())('per-agent memory quotas on $name', ({ create }) => {
  let t: MemoryTestServer;
  let cleanup: () => Promise<void>;
  const embedder = createBagOfWordsEmbedder();

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startMemoryTestServer({ db: fixture.db, embedder });
    // Set before the first write: each process reads the quota settings again once a minute.
    const bridge = { credential: t.server.bridgeKey };
    for (const [key, value] of [
      ['memory_max_records_per_agent', 3],
      ['memory_max_kv_entries_per_agent', 2],
    ] as const) {
      expect((await t.server.call('agent-identity/settings/set', { key, value }, bridge)).status).toBe(200);
    }
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  const write = (as: 'alice' | 'bob', text: string, provenance = 'quota') =>
    t.memory('mem/write', { agent_id: as, kind: text.startsWith('note') ? 'episode' : 'semantic', text, provenance, scope: ['self'] }, as);

  it('refuses the memory past the quota with 409, for that agent only, and takes one again once it forgets', async () => {
    for (const text of ['gardening in spring', 'note: water the roses', 'pruning the apple tree']) {
      expect((await write('alice', text, text.startsWith('note') ? 'notes' : 'quota')).status).toBe(200);
    }
    const refused = await write('alice', 'one memory too many');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('memory_max_records_per_agent'),
      details: { quota: 3, used: 3 },
    });
    expect((await write('bob', 'bob has room')).status).toBe(200);
    expect((await t.memory('mem/forget', { agent_id: 'alice', provenance: 'notes' }, 'alice')).body).toEqual({ deleted: 1 });
    expect((await write('alice', 'room again after forgetting')).status).toBe(200);
    expect((await write('alice', 'and full again')).status).toBe(409);
  });

  // Each write of a burst at an agent's first write counted on its own and saw the count from before the burst.
  it('holds the quota exactly through a burst of concurrent first writes', async () => {
    const puts = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        t.memory('kv/put', { agent_id: 'bob', key: `burst${index}`, value: index, scope: ['self'] }, 'bob'),
      ),
    );
    expect(puts.filter((put) => put.status === 200)).toHaveLength(2);
    expect(puts.filter((put) => put.status === 409)).toHaveLength(28);
    const writes = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        t.memory(
          'mem/write',
          { agent_id: 'carol', kind: 'semantic', text: `burst memory ${index}`, provenance: 'burst', scope: ['self'] },
          'carol',
        ),
      ),
    );
    expect(writes.filter((write) => write.status === 200)).toHaveLength(3);
    expect((await t.memory('mem/forget', { agent_id: 'carol', provenance: 'burst' }, 'carol')).body).toEqual({ deleted: 3 });
  });

  // Concurrent puts of one new key each found it absent and took a slot: those past the quota were refused
  // although they only replaced the value, and the key was counted once per put.
  it('answers every concurrent put of one new key and counts the key once', async () => {
    const puts = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        t.memory('kv/put', { agent_id: 'carol', key: 'same', value: index, scope: ['self'] }, 'carol'),
      ),
    );
    expect(puts.map((put) => put.status)).toEqual(Array(10).fill(200));
    const read = await t.memory('kv/get', { agent_id: 'carol', key: 'same', scope: ['self'] }, 'carol');
    expect(read.body.value).toBe(9);
    expect((await t.memory('kv/put', { agent_id: 'carol', key: 'other', value: 1, scope: ['self'] }, 'carol')).status).toBe(200);
    const refused = await t.memory('kv/put', { agent_id: 'carol', key: 'third', value: 1, scope: ['self'] }, 'carol');
    expect(refused.body.error.details).toEqual({ quota: 2, used: 2 });
  });

  // A write that failed (the embedder down: 500) kept its slot, so later writes were refused below the quota.
  it('does not count a write that failed against the quota', async () => {
    const semantic = (text: string) =>
      t.memory('mem/write', { agent_id: 'carol', kind: 'semantic', text, provenance: 'outage', scope: ['self'] }, 'carol');
    embedder.failWith = new Error('embedder down');
    try {
      for (const text of ['lost during the outage', 'lost again', 'lost once more']) expect((await semantic(text)).status).toBe(500);
    } finally {
      embedder.failWith = null;
    }
    for (const text of ['stored after the outage', 'stored again', 'stored once more']) expect((await semantic(text)).status).toBe(200);
    expect((await semantic('one too many')).body.error.details).toEqual({ quota: 3, used: 3 });
    expect((await t.memory('mem/forget', { agent_id: 'carol', provenance: 'outage' }, 'carol')).body).toEqual({ deleted: 3 });
  });

  it('refuses a new kv key past the quota, still replaces the value of a key the agent has, and takes one after /kv/delete', async () => {
    const put = (key: string, value: unknown) => t.memory('kv/put', { agent_id: 'alice', key, value, scope: ['self'] }, 'alice');
    expect((await put('first', 1)).status).toBe(200);
    expect((await put('second', 2)).status).toBe(200);
    const refused = await put('third', 3);
    expect(refused.status).toBe(409);
    expect(refused.body.error.details).toEqual({ quota: 2, used: 2 });
    expect((await put('first', 'replaced')).status).toBe(200);
    const read = await t.memory('kv/get', { agent_id: 'alice', key: 'first', scope: ['self'] }, 'alice');
    expect(read.body.value).toBe('replaced');
    expect(refused.body.error.message).toContain('/kv/delete');

    const remove = (key: string) => t.memory('kv/delete', { agent_id: 'alice', key }, 'alice');
    expect((await remove('second')).body).toEqual({ deleted: 1 });
    expect((await remove('second')).body).toEqual({ deleted: 0 });
    expect((await put('third', 3)).status).toBe(200);
    expect((await t.memory('kv/get', { agent_id: 'alice', key: 'second', scope: ['self'] }, 'alice')).status).toBe(404);
    expect((await t.memory('kv/delete', { agent_id: 'alice', key: 'first' }, 'bob')).status).toBe(403);
  });
});
