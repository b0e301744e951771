import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTED_TEXT_CHARS } from './admin-queries.js';
import { createBagOfWordsEmbedder } from './test-support/bag-of-words-embedder.js';
import { type MemoryTestServer, startMemoryTestServer } from './test-support/memory-test-server.js';

// #16: the console browses memories across agents through these bridge-key routes.
describe.each(sqlDatabases())('agent-memory operator routes on $name', ({ create }) => {
  let t: MemoryTestServer;
  let cleanup: () => Promise<void>;
  const bridge = () => ({ credential: t.server.bridgeKey });
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startMemoryTestServer({ db: fixture.db, embedder: createBagOfWordsEmbedder() });
    const writes: Array<[string, 'alice' | 'bob', string, string, string]> = [
      ['a1', 'alice', 'episode', 'met bob at the garden', 'diary'],
      ['a2', 'alice', 'semantic', 'tomatoes need full sun', 'garden-book'],
      ['a3', 'alice', 'semantic', 'x'.repeat(LISTED_TEXT_CHARS + 20), 'garden-book'],
      ['b1', 'bob', 'kv', 'bob prefers tea', 'chat'],
    ];
    for (const [name, agent, kind, text, provenance] of writes) {
      const written = await t.memory('mem/write', { agent_id: agent, kind, text, provenance, scope: ['self'] }, agent);
      expect(written.status).toBe(200);
      ids[name] = written.body.id;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it('lists memories across agents newest first, page by page', async () => {
    const first = await t.memory('admin/memories/list', { limit: 3 }, bridge());
    expect(first.status).toBe(200);
    expect(first.body.memories.map((memory: { id: string }) => memory.id)).toEqual([ids.b1, ids.a3, ids.a2]);
    const rest = await t.memory('admin/memories/list', { limit: 3, cursor: first.body.next_cursor }, bridge());
    expect(rest.body.memories.map((memory: { id: string }) => memory.id)).toEqual([ids.a1]);
    expect(rest.body.next_cursor).toBeNull();
  });

  it('filters by agent, kind and provenance and cuts long texts', async () => {
    const filtered = await t.memory('admin/memories/list', { agent_id: 'alice', kind: 'semantic', provenance: 'garden-book' }, bridge());
    expect(filtered.body.memories).toEqual([
      expect.objectContaining({ id: ids.a3, text: 'x'.repeat(LISTED_TEXT_CHARS), text_truncated: true, scope: ['self'] }),
      expect.objectContaining({ id: ids.a2, agent_id: 'alice', kind: 'semantic', text: 'tomatoes need full sun', text_truncated: false }),
    ]);
    const kinds = await t.memory('admin/memories/list', { kind: 'kv' }, bridge());
    expect(kinds.body.memories.map((memory: { agent_id: string }) => memory.agent_id)).toEqual(['bob']);
  });

  it('lists an agent’s provenances with counts and counts memories by kind', async () => {
    const provenances = await t.memory('admin/provenances/list', { agent_id: 'alice', limit: 1 }, bridge());
    expect(provenances.body.provenances).toEqual([{ provenance: 'diary', memories: 1 }]);
    const next = await t.memory('admin/provenances/list', { agent_id: 'alice', cursor: provenances.body.next_cursor }, bridge());
    expect(next.body).toEqual({ provenances: [{ provenance: 'garden-book', memories: 2 }], next_cursor: null });
    const summary = await t.memory('admin/summary', {}, bridge());
    expect(summary.body).toEqual({ memories: 4, by_kind: { episode: 1, semantic: 2, kv: 1 } });
  });

  // The cut fell between the halves of a surrogate pair and listed a lone surrogate.
  it('cuts a long text before a character it would split', async () => {
    const text = `${'a'.repeat(LISTED_TEXT_CHARS - 1)}😀 and more`;
    expect(
      (await t.memory('mem/write', { agent_id: 'carol', kind: 'episode', text, provenance: 'emoji', scope: ['self'] }, 'carol')).status,
    ).toBe(200);
    const listed = await t.memory('admin/memories/list', { agent_id: 'carol', provenance: 'emoji' }, bridge());
    expect(listed.body.memories).toEqual([expect.objectContaining({ text: 'a'.repeat(LISTED_TEXT_CHARS - 1), text_truncated: true })]);
  });

  it('takes the bridge key only and refuses unknown kinds and forged cursors', async () => {
    expect((await t.memory('admin/memories/list', {}, 'alice')).status).toBe(403);
    expect((await t.memory('admin/memories/list', { kind: 'dream' }, bridge())).status).toBe(400);
    expect((await t.memory('admin/memories/list', { cursor: 'nope' }, bridge())).status).toBe(400);
  });
});
