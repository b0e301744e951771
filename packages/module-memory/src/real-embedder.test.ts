import { existsSync } from 'node:fs';
import { createWordVectorEmbedder, defaultVectorsFile } from '@agentinfra/adapter-wordvec';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MemoryTestServer, startMemoryTestServer } from './test-support/memory-test-server.js';

const built = existsSync(defaultVectorsFile());
if (!built) {
  console.log(
    `[agentinfra] skipping the agent-memory test with the default embedder: ${defaultVectorsFile()} is not built; run "pnpm --filter @agentinfra/adapter-wordvec build:vectors"`,
  );
}

const MEMORIES = [
  'The user prefers dark mode in every code editor',
  'Production deploys happen on Friday afternoons after the billing checks',
  'Alice is allergic to peanuts and loves sushi',
  'The staging database password is rotated every month',
  'Our team standup meeting moved to 10:30 on Mondays',
  'Invoice INV88231 from Quuxcorp was paid on 3 March',
];

/** Paraphrases with few shared words; averaged word vectors separate these by a wide margin (measured ≥ 0.25). */
const PARAPHRASES: Array<[string, number]> = [
  ['which colour theme does the customer like for programming?', 0],
  ['what food should we avoid ordering for Alice?', 2],
  ['when is the morning team meeting?', 4],
];

describe.skipIf(!built).each(sqlDatabases())('agent-memory with the default word-vector embedder on $name', ({ create }) => {
  let t: MemoryTestServer;
  let cleanup: () => Promise<void>;
  const ids: string[] = [];

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startMemoryTestServer({ db: fixture.db, embedder: createWordVectorEmbedder() });
    for (const text of MEMORIES) {
      const written = await t.memory('mem/write', { agent_id: 'alice', kind: 'semantic', text, provenance: 'p', scope: ['self'] }, 'alice');
      expect(written.status).toBe(200);
      ids.push(written.body.id);
    }
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it('ranks the memory a paraphrase refers to first', async () => {
    for (const [q, expected] of PARAPHRASES) {
      const response = await t.memory('mem/query', { agent_id: 'alice', q, k: 5 }, 'alice');
      expect(response.status).toBe(200);
      expect(response.body.hits[0]?.text, q).toBe(MEMORIES[expected]);
      expect(response.body.hits[0]?.id).toBe(ids[expected]);
    }
  });

  it('finds a memory by a word the vectors do not know (an identifier, a made-up name), right after writing it', async () => {
    for (const q of ['INV88231', 'quuxcorp', 'was INV88231 paid?']) {
      const response = await t.memory('mem/query', { agent_id: 'alice', q, k: 5 }, 'alice');
      expect(response.body.hits[0]?.text, q).toBe(MEMORIES[5]);
    }
    const written = await t.memory(
      'mem/write',
      { agent_id: 'alice', kind: 'semantic', text: 'Ticket zyqx7wabc tracks the flaky login test', provenance: 'p', scope: ['self'] },
      'alice',
    );
    const response = await t.memory('mem/query', { agent_id: 'alice', q: 'zyqx7wabc', k: 5 }, 'alice');
    expect(response.body.hits[0]?.id).toBe(written.body.id);
  });
});
