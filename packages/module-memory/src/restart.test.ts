import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBagOfWordsEmbedder } from './test-support/bag-of-words-embedder.js';
import { startMemoryTestServer } from './test-support/memory-test-server.js';

describe('agent-memory across a restart on one SQLite file', () => {
  let folder: string;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'agentinfra-memory-restart-'));
  });

  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('reads back memories, vectors, sets and kv written before kernel.stop()', async () => {
    const filename = join(folder, 'agentinfra.db');
    const embedder = createBagOfWordsEmbedder();
    const before = await startMemoryTestServer({ db: createSqliteDatabase({ filename }), embedder });
    const written = await before.memory(
      'mem/write',
      {
        agent_id: 'alice',
        kind: 'semantic',
        text: 'Deploy the billing service every Friday afternoon',
        provenance: 'ops',
        scope: ['self', 'team:research'],
      },
      'alice',
    );
    expect(written.status).toBe(200);
    const id = written.body.id as string;
    expect((await before.memory('set/put', { agent_id: 'alice', name: 'ops', add_ids: [id] }, 'alice')).status).toBe(200);
    expect(
      (await before.memory('kv/put', { agent_id: 'alice', key: 'tz', value: { zone: 'Europe/Paris' }, scope: ['self'] }, 'alice')).status,
    ).toBe(200);
    await before.server.stop();

    const after = await startMemoryTestServer({ db: createSqliteDatabase({ filename }), embedder, agents: false });
    try {
      const hits = await after.memory('mem/query', { agent_id: 'bob', q: 'when do we release payments', scope: ['team:research'] }, 'bob');
      expect(hits.status).toBe(200);
      expect(hits.body.hits[0]).toMatchObject({ id, provenance: 'ops', agent_id: 'alice', created_at: written.body.created_at });
      expect((await after.memory('set/get', { agent_id: 'alice', name: 'ops' }, 'alice')).body).toEqual({ name: 'ops', ids: [id] });
      const kv = await after.memory('kv/get', { agent_id: 'alice', key: 'tz', scope: ['self'] }, 'alice');
      expect(kv.body).toMatchObject({ key: 'tz', value: { zone: 'Europe/Paris' }, scope: ['self'] });
    } finally {
      await after.server.stop();
    }
  });
});
