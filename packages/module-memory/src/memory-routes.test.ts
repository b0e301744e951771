import type { SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryService } from './service.js';
import { type BagOfWordsEmbedder, createBagOfWordsEmbedder } from './test-support/bag-of-words-embedder.js';
import { type MemoryTestServer, startMemoryTestServer } from './test-support/memory-test-server.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

describe.each(sqlDatabases())('agent-memory over HTTP on $name', ({ name, create }) => {
  let t: MemoryTestServer;
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;
  let embedder: BagOfWordsEmbedder;

  const write = async (as: 'alice' | 'bob' | 'carol', text: string, extra: Record<string, unknown> = {}) => {
    const response = await t.memory(
      'mem/write',
      { agent_id: as, kind: 'semantic', text, provenance: 'test', scope: ['self'], ...extra },
      as,
    );
    expect(response.status).toBe(200);
    return response.body.id as string;
  };
  const query = (as: 'alice' | 'bob' | 'carol', q: string, extra: Record<string, unknown> = {}) =>
    t.memory('mem/query', { agent_id: as, q, ...extra }, as);
  /**
   * Ids of the hits that mention `word`. With a large k every visible memory is a hit, and hybrid
   * ranking gives each a rank-based score, so the text, not the score, tells the relevant ones apart.
   */
  const idsOf = (body: { hits: Array<{ id: string; text: string }> }, word: string) =>
    body.hits.filter((hit) => hit.text.includes(word)).map((hit) => hit.id);

  beforeAll(async () => {
    const fixture = await create();
    db = fixture.db;
    cleanup = fixture.cleanup;
    embedder = createBagOfWordsEmbedder();
    t = await startMemoryTestServer({ db, embedder });
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  it('writes every kind and answers { id: mem_…, created_at } with ms precision', async () => {
    for (const kind of ['episode', 'semantic', 'kv']) {
      const response = await t.memory(
        'mem/write',
        { agent_id: 'alice', kind, text: `a ${kind} memory about gardening`, provenance: 'kinds', scope: ['self'] },
        'alice',
      );
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id: expect.stringMatching(/^mem_[A-Za-z0-9_-]{22}$/), created_at: expect.stringMatching(ISO_MS) });
    }
    const hits = await query('alice', 'gardening memory');
    expect(hits.body.hits.map((hit: { text: string }) => hit.text)).toEqual(['a semantic memory about gardening']);
  });

  it('ranks a paraphrased query to the right memory first, with cosine scores best first', async () => {
    const dark = await write('alice', 'The user prefers dark mode in the editor', { provenance: 'ranking' });
    const deploy = await write('alice', 'Deploy the billing service every Friday afternoon', { provenance: 'ranking' });
    const food = await write('alice', "Alice's favourite food is sushi", { provenance: 'ranking' });
    const cases: Array<[string, string]> = [
      ['which colour theme does the customer like in the IDE?', dark],
      ['when do we release payments?', deploy],
      ['what dish does alice love to eat', food],
    ];
    for (const [q, expected] of cases) {
      const response = await query('alice', q, { k: 3 });
      expect(response.status).toBe(200);
      expect(response.body.hits[0]).toMatchObject({ id: expected, provenance: 'ranking', agent_id: 'alice', scope: ['self'] });
      const scores = response.body.hits.map((hit: { score: number }) => hit.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      expect(scores[0]).toBeGreaterThan(0.2);
      expect(scores[0]).toBeLessThanOrEqual(1.0001);
    }
  });

  it('defaults k to 10 and scope to self, and bounds k to 1..100', async () => {
    for (let i = 0; i < 12; i += 1) await write('bob', `bob note number ${i} about compilers`, { provenance: 'bulk' });
    const defaulted = await t.memory('mem/query', { agent_id: 'bob', q: 'compilers note' }, 'bob');
    expect(defaulted.status).toBe(200);
    expect(defaulted.body.hits).toHaveLength(10);
    expect((await query('bob', 'compilers', { k: 1 })).body.hits).toHaveLength(1);
    expect((await query('bob', 'compilers', { k: 100 })).body.hits).toHaveLength(12);
    for (const k of [0, 101, 2.5, '3']) {
      const bad = await query('bob', 'compilers', { k });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.fields.map((field: { path: string }) => field.path)).toContain('k');
    }
  });

  it('keeps self rows private and shows team rows to members only', async () => {
    const secret = await write('alice', 'alice private password hint is hedgehog');
    const shared = await write('alice', 'team research hedgehog experiment results', { scope: ['team:research'] });
    const both = await write('alice', 'hedgehog notes for me and the team', { scope: ['self', 'team:research'] });
    const bobOwn = await write('bob', 'bob hedgehog sketch');

    const bobSelf = await query('bob', 'hedgehog', { scope: ['self'], k: 50 });
    expect(idsOf(bobSelf.body, 'hedgehog')).toEqual([bobOwn]);
    const bobTeam = await query('bob', 'hedgehog', { scope: ['team:research'], k: 50 });
    expect(new Set(idsOf(bobTeam.body, 'hedgehog'))).toEqual(new Set([shared, both]));
    const bobAll = await query('bob', 'hedgehog', { scope: ['self', 'team:research'], k: 50 });
    expect(new Set(idsOf(bobAll.body, 'hedgehog'))).toEqual(new Set([shared, both, bobOwn]));
    expect(idsOf(bobAll.body, 'hedgehog')).not.toContain(secret);
    const aliceSelf = await query('alice', 'hedgehog', { scope: ['self'], k: 50 });
    expect(new Set(idsOf(aliceSelf.body, 'hedgehog'))).toEqual(new Set([secret, both]));

    const carol = await query('carol', 'hedgehog', { scope: ['team:research'] });
    expect(carol.status).toBe(403);
    expect(carol.body.error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('research') });
    const carolSelf = await query('carol', 'hedgehog', { scope: ['self'] });
    expect(carolSelf.status).toBe(200);
    expect(idsOf(carolSelf.body, 'hedgehog')).toEqual([]);
  });

  it('refuses writing or reading under a team the agent is not in (403)', async () => {
    const writeTeam = await t.memory(
      'mem/write',
      { agent_id: 'carol', kind: 'episode', text: 'x', provenance: 'p', scope: ['team:research'] },
      'carol',
    );
    expect(writeTeam.status).toBe(403);
    const kv = await t.memory('kv/put', { agent_id: 'carol', key: 'k', value: 1, scope: ['team:research'] }, 'carol');
    expect(kv.status).toBe(403);
    const kvRead = await t.memory('kv/get', { agent_id: 'carol', key: 'k', scope: ['team:nope'] }, 'carol');
    expect(kvRead.status).toBe(403);
  });

  it('forgets by provenance: rows, vectors and set memberships, and answers { deleted }', async () => {
    const vectors = db.vectorIndex({ table: 'memory_vectors' });
    const a = await write('alice', 'volcano trip planning for iceland', { provenance: 'chat-42' });
    const b = await write('alice', 'volcano ash cloud delays flights', { provenance: 'chat-42' });
    await t.memory(
      'mem/write',
      { agent_id: 'alice', kind: 'episode', text: 'talked about volcanoes', provenance: 'chat-42', scope: ['self'] },
      'alice',
    );
    const keep = await write('alice', 'volcano documentary recommendation', { provenance: 'chat-43' });
    await write('bob', 'bob volcano memory with the same provenance', { provenance: 'chat-42' });
    expect((await t.memory('set/put', { agent_id: 'alice', name: 'volcanoes', add_ids: [a, b, keep] }, 'alice')).body.ids).toHaveLength(3);
    const before = await vectors.count();

    const forgotten = await t.memory('mem/forget', { agent_id: 'alice', provenance: 'chat-42' }, 'alice');
    expect(forgotten.status).toBe(200);
    expect(forgotten.body).toEqual({ deleted: 3 });
    expect(await vectors.count()).toBe(before - 2);
    expect(idsOf((await query('alice', 'volcano', { k: 100 })).body, 'volcano')).toEqual([keep]);
    const everything = (await query('alice', 'volcano', { k: 100, scope: ['self', 'team:research'] })).body.hits.map(
      (hit: { id: string }) => hit.id,
    );
    expect(everything).not.toContain(a);
    expect(everything).not.toContain(b);
    expect((await t.memory('set/get', { agent_id: 'alice', name: 'volcanoes' }, 'alice')).body).toEqual({ name: 'volcanoes', ids: [keep] });
    expect(idsOf((await query('bob', 'volcano')).body, 'volcano')).toHaveLength(1);
    expect((await t.memory('mem/forget', { agent_id: 'alice', provenance: 'chat-42' }, 'alice')).body).toEqual({ deleted: 0 });
  });

  it('forgets more memories than one SQL statement takes (chunks of 500)', async () => {
    const service = t.server.kernel.service<MemoryService>('agent-memory');
    const vectors = db.vectorIndex({ table: 'memory_vectors' });
    const before = await vectors.count();
    for (let i = 0; i < 620; i += 1) {
      await service.write({
        agent_id: 'carol',
        kind: i % 2 ? 'semantic' : 'episode',
        text: `bulk note ${i}`,
        provenance: 'bulk-import',
        scope: ['self'],
      });
    }
    expect(await vectors.count()).toBe(before + 310);
    expect(await service.forget({ agent_id: 'carol', provenance: 'bulk-import' })).toEqual({ deleted: 620 });
    expect(await vectors.count()).toBe(before);
  });

  // Review: on PostgreSQL a forget deleted its rows in scan order and met, through the cascade, the member rows of a
  // set/put that locked the same memories in id order: deadlock (40P01), a 503, after the vectors were gone.
  it('forgets memories while set/puts add them, without a deadlock', async () => {
    let seed = 17;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let round = 0; round < 10; round += 1) {
      const provenance = `race-${round}`;
      const written = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          t.memory('mem/write', { agent_id: 'carol', kind: 'semantic', text: `race note ${i}`, provenance, scope: ['self'] }, 'carol'),
        ),
      );
      const ids = written.map((response) => response.body.id as string);
      const pick = () =>
        ids
          .map((id) => [random(), id] as const)
          .sort((a, b) => a[0] - b[0])
          .slice(0, 150)
          .map(([, id]) => id);
      const put = (name: string) => t.memory('set/put', { agent_id: 'carol', name, add_ids: pick() }, 'carol');
      const [first, second, forgot, third] = await Promise.all([
        put('race-a'),
        put('race-b'),
        t.memory('mem/forget', { agent_id: 'carol', provenance }, 'carol'),
        put('race-c'),
      ]);
      expect(forgot?.status, JSON.stringify(forgot?.body)).toBe(200);
      expect(forgot?.body).toEqual({ deleted: 200 });
      // A set/put that ran after the forget finds no such memories (404); one before it lost its members with them.
      for (const answer of [first, second, third]) expect([200, 404], JSON.stringify(answer?.body)).toContain(answer?.status);
      expect(Number((await db.knex('memory_set_members').whereIn('memory_id', ids).count({ n: '*' }))[0]?.n)).toBe(0);
    }
  }, 120_000);

  it('puts and gets sets atomically, ids sorted, members must be the agent’s memories', async () => {
    const ids = [await write('alice', 'set member one'), await write('alice', 'set member two'), await write('alice', 'set member three')];
    const sorted = (list: string[]) => [...list].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    const first = await t.memory('set/put', { agent_id: 'alice', name: 'favourites', add_ids: [ids[0], ids[1]], remove_ids: [] }, 'alice');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ name: 'favourites', ids: sorted([ids[0] as string, ids[1] as string]) });
    const second = await t.memory(
      'set/put',
      { agent_id: 'alice', name: 'favourites', add_ids: [ids[2], ids[2]], remove_ids: [ids[0], 'mem_not_a_member'] },
      'alice',
    );
    expect(second.body).toEqual({ name: 'favourites', ids: sorted([ids[1] as string, ids[2] as string]) });
    expect((await t.memory('set/get', { agent_id: 'alice', name: 'favourites' }, 'alice')).body).toEqual(second.body);
    const empty = await t.memory('set/put', { agent_id: 'alice', name: 'empty' }, 'alice');
    expect(empty.body).toEqual({ name: 'empty', ids: [] });

    const unknown = await t.memory('set/put', { agent_id: 'alice', name: 'favourites', add_ids: [ids[0], 'mem_missing'] }, 'alice');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'not_found', details: { unknown_ids: ['mem_missing'] } });
    expect((await t.memory('set/get', { agent_id: 'alice', name: 'favourites' }, 'alice')).body).toEqual(second.body);
    const foreign = await t.memory('set/put', { agent_id: 'bob', name: 'stolen', add_ids: [ids[0]] }, 'bob');
    expect(foreign.status).toBe(404);
    expect((await t.memory('set/get', { agent_id: 'bob', name: 'stolen' }, 'bob')).status).toBe(404);
    const overlap = await t.memory('set/put', { agent_id: 'alice', name: 'favourites', add_ids: [ids[0]], remove_ids: [ids[0]] }, 'alice');
    expect(overlap.status).toBe(400);
    expect(overlap.body.error.details.fields[0].path).toBe('remove_ids');
  });

  // A forget committing between set/put's membership check and its insert broke the foreign key: a 500.
  it('answers set/put racing /mem/forget with 200 or 404, never a server error', async () => {
    for (let round = 0; round < 3; round += 1) {
      const ids = await Promise.all(
        Array.from({ length: 20 }, (_, index) => write('carol', `raced ${round} ${index}`, { provenance: `race${round}` })),
      );
      const [puts, forgot] = await Promise.all([
        Promise.all(ids.map((id) => t.memory('set/put', { agent_id: 'carol', name: `raced${round}`, add_ids: [id] }, 'carol'))),
        t.memory('mem/forget', { agent_id: 'carol', provenance: `race${round}` }, 'carol'),
      ]);
      expect(forgot.body).toEqual({ deleted: 20 });
      expect(puts.map((put) => put.status).filter((status) => status !== 200 && status !== 404)).toEqual([]);
      const left = await t.memory('set/get', { agent_id: 'carol', name: `raced${round}` }, 'carol');
      expect(left.status === 404 ? [] : left.body.ids).toEqual([]);
    }
  });

  // Rows were locked chunk by chunk in the order given: two puts of the same 1,000 ids in opposite
  // orders deadlocked on PostgreSQL (40P01, a 503) about half the time.
  it('puts the same memories into sets from concurrent calls in any order without a deadlock', async () => {
    const service = t.server.kernel.service<MemoryService>('agent-memory');
    const ids: string[] = [];
    for (let i = 0; i < 1_000; i += 1) {
      ids.push(
        (await service.write({ agent_id: 'carol', kind: 'episode', text: `ordered ${i}`, provenance: 'lock-order', scope: ['self'] })).id,
      );
    }
    for (let round = 0; round < 6; round += 1) {
      const results = await Promise.all([
        service.setPut({ agent_id: 'carol', name: `up${round}`, add_ids: ids, remove_ids: [] }),
        service.setPut({ agent_id: 'carol', name: `down${round}`, add_ids: [...ids].reverse(), remove_ids: [] }),
      ]);
      expect(results.map((result) => result.ids.length)).toEqual([1_000, 1_000]);
    }
    expect(await service.forget({ agent_id: 'carol', provenance: 'lock-order' })).toEqual({ deleted: 1_000 });
  });

  it('stores any JSON in kv and enforces the scope on reads', async () => {
    for (const value of [{ theme: 'dark', sizes: [1, 2] }, [1, 'two', null], 42, 'text', true, null]) {
      const put = await t.memory('kv/put', { agent_id: 'alice', key: 'prefs', value, scope: ['self'] }, 'alice');
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ key: 'prefs', updated_at: expect.stringMatching(ISO_MS) });
      const got = await t.memory('kv/get', { agent_id: 'alice', key: 'prefs', scope: ['self'] }, 'alice');
      expect(got.status).toBe(200);
      expect(got.body).toEqual({ key: 'prefs', value, scope: ['self'], updated_at: put.body.updated_at });
    }
    expect((await t.memory('kv/get', { agent_id: 'alice', key: 'prefs', scope: ['team:research'] }, 'alice')).status).toBe(404);
    await t.memory('kv/put', { agent_id: 'alice', key: 'shared', value: { n: 1 }, scope: ['team:research'] }, 'alice');
    const outside = await t.memory('kv/get', { agent_id: 'alice', key: 'shared', scope: ['self'] }, 'alice');
    expect(outside.status).toBe(404);
    expect(outside.body.error.code).toBe('not_found');
    const inside = await t.memory('kv/get', { agent_id: 'alice', key: 'shared', scope: ['self', 'team:research'] }, 'alice');
    expect(inside.body).toMatchObject({ value: { n: 1 }, scope: ['team:research'] });
    expect((await t.memory('kv/get', { agent_id: 'alice', key: 'absent', scope: ['self'] }, 'alice')).status).toBe(404);
    expect((await t.memory('kv/get', { agent_id: 'bob', key: 'prefs', scope: ['self'] }, 'bob')).status).toBe(404);
    const noScope = await t.memory('kv/put', { agent_id: 'alice', key: 'k', value: 1 }, 'alice');
    expect(noScope.status).toBe(400);
    expect(noScope.body.error.details.fields.map((field: { path: string }) => field.path)).toContain('scope');
    const noValue = await t.memory('kv/put', { agent_id: 'alice', key: 'k', scope: ['self'] }, 'alice');
    expect(noValue.status).toBe(400);
  });

  it('answers 400 with details.fields for bodies that fail the schema', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['mem/write', { agent_id: 'alice', kind: 'dream', text: 't', provenance: 'p', scope: ['self'] }, 'kind'],
      ['mem/write', { agent_id: 'alice', kind: 'episode', text: '', provenance: 'p', scope: ['self'] }, 'text'],
      ['mem/write', { agent_id: 'alice', kind: 'episode', text: 't', provenance: 'p', scope: [] }, 'scope'],
      ['mem/write', { agent_id: 'alice', kind: 'episode', text: 't', provenance: 'p', scope: ['everyone'] }, 'scope.0'],
      ['mem/write', { agent_id: 'alice', kind: 'episode', text: 't', provenance: 'p', scope: ['self'], extra: 1 }, 'extra'],
      ['mem/query', { agent_id: 'alice' }, 'q'],
      ['mem/query', { agent_id: 'alice', q: '   ' }, 'q'],
      ['mem/forget', { agent_id: 'alice' }, 'provenance'],
      ['set/put', { agent_id: 'alice', name: '' }, 'name'],
      ['kv/get', { agent_id: 'alice', key: 'k' }, 'scope'],
    ];
    for (const [path, body, field] of cases) {
      const response = await t.memory(path, body, 'alice');
      expect(response.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect(response.body.error.details.fields.map((item: { path: string }) => item.path)).toContain(field);
    }
    const notJson = await t.server.call('agent-memory/mem/query', '{not json', { credential: t.keys.alice });
    expect(notJson.status).toBe(400);
  });

  it('answers 401 without or with an unknown credential, 403 for another agent’s key', async () => {
    const body = { agent_id: 'alice', q: 'anything' };
    expect((await t.memory('mem/query', body, {})).status).toBe(401);
    expect((await t.memory('mem/query', body, { credential: 'dk_unknown' })).status).toBe(401);
    const other = await t.memory('mem/query', body, 'bob');
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('forbidden');
    expect((await t.memory('mem/query', body, { credential: t.server.bridgeKey })).status).toBe(200);
  });

  it('accepts a delegation only with the route’s permission', async () => {
    const delegate = async (scope: string[]) => {
      const response = await t.server.call(
        'agent-identity/delegate',
        { from_agent: 'alice', to_agent: 'bob', scope, expires_at: inDays(1) },
        { credential: t.keys.alice },
      );
      expect(response.status).toBe(200);
      return { credential: response.body.token as string };
    };
    const writer = await delegate(['memory.write']);
    const denied = await t.memory('mem/query', { agent_id: 'alice', q: 'hedgehog' }, writer);
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain('memory.read');
    const reader = await delegate(['memory.read']);
    const allowed = await t.memory('mem/query', { agent_id: 'alice', q: 'hedgehog' }, reader);
    expect(allowed.status).toBe(200);
    expect(allowed.body.hits.length).toBeGreaterThan(0);
    expect((await t.memory('mem/forget', { agent_id: 'alice', provenance: 'test' }, reader)).status).toBe(403);
    expect((await t.memory('mem/query', { agent_id: 'bob', q: 'hedgehog' }, reader)).status).toBe(403);
    const wrote = await t.memory(
      'mem/write',
      { agent_id: 'alice', kind: 'episode', text: 'by delegate', provenance: 'dlg', scope: ['self'] },
      writer,
    );
    expect(wrote.status).toBe(200);
  });

  it('answers 413 for a text over 32 KiB or a kv value over 64 KiB', async () => {
    const big = await t.memory(
      'mem/write',
      { agent_id: 'alice', kind: 'episode', text: 'é'.repeat(16_385), provenance: 'p', scope: ['self'] },
      'alice',
    );
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    const fits = await t.memory(
      'mem/write',
      { agent_id: 'alice', kind: 'episode', text: 'x'.repeat(32_768), provenance: 'p', scope: ['self'] },
      'alice',
    );
    expect(fits.status).toBe(200);
    const value = await t.memory('kv/put', { agent_id: 'alice', key: 'big', value: 'v'.repeat(70_000), scope: ['self'] }, 'alice');
    expect(value.status).toBe(413);
    const bigQuery = await query('alice', 'q'.repeat(40_000));
    expect(bigQuery.status).toBe(413);
  });

  it.runIf(name === 'sqlite')('answers a write to a full database with 507 insufficient_storage and stores none of it', async () => {
    const rows = async () => Number((await db.knex('memory_records').count({ n: '*' }).first())?.n);
    const vectors = db.vectorIndex({ table: 'memory_vectors' });
    const [{ page_count: pages }] = (await db.knex.raw('pragma page_count')) as [{ page_count: number }];
    await db.knex.raw(`pragma max_page_count = ${pages}`);
    try {
      // Earlier tests freed pages that writes reuse first: write until the file would have to grow.
      let counts: number[] = [];
      let answer: { status: number; body: { error?: unknown } } | undefined;
      for (let attempt = 0; attempt < 100 && answer?.status !== 507; attempt += 1) {
        counts = [await rows(), await vectors.count()];
        answer = await t.memory(
          'mem/write',
          {
            agent_id: 'alice',
            kind: 'semantic',
            text: `${'disk '.repeat(6_000)}full ${attempt}`,
            provenance: 'disk-full',
            scope: ['self'],
          },
          'alice',
        );
        expect([200, 507]).toContain(answer.status);
      }
      expect(answer?.status).toBe(507);
      expect(answer?.body.error).toEqual({ code: 'insufficient_storage', message: expect.stringContaining('nothing was stored') });
      expect([await rows(), await vectors.count()]).toEqual(counts);
      // Reads still answer while the database is full.
      expect((await query('alice', 'disk full')).status).toBe(200);
    } finally {
      await db.knex.raw('pragma max_page_count = 4294967294');
    }
    await write('alice', 'written once space was freed');
    expect((await t.memory('mem/forget', { agent_id: 'alice', provenance: 'disk-full' }, 'alice')).status).toBe(200);
  });

  it('stores nothing when the embedder fails (500 without details), and still writes episodes', async () => {
    const rows = async () => Number((await db.knex('memory_records').count({ n: '*' }).first())?.n);
    const vectors = db.vectorIndex({ table: 'memory_vectors' });
    const [rowsBefore, vectorsBefore] = [await rows(), await vectors.count()];
    embedder.failWith = new Error('model server down at http://user:secret@example.test');
    try {
      const failed = await t.memory(
        'mem/write',
        { agent_id: 'alice', kind: 'semantic', text: 'lost', provenance: 'p', scope: ['self'] },
        'alice',
      );
      expect(failed.status).toBe(500);
      expect(failed.body.error.code).toBe('internal');
      expect(JSON.stringify(failed.body)).not.toContain('secret');
      expect(await rows()).toBe(rowsBefore);
      expect(await vectors.count()).toBe(vectorsBefore);
      const episode = await t.memory(
        'mem/write',
        { agent_id: 'alice', kind: 'episode', text: 'kept', provenance: 'p', scope: ['self'] },
        'alice',
      );
      expect(episode.status).toBe(200);
    } finally {
      embedder.failWith = null;
    }
  });

  it('stores a semantic text the embedder finds nothing in, without a vector', async () => {
    const id = await write('carol', '!!! ??? ...', { provenance: 'punct' });
    expect((await query('carol', 'anything at all')).body.hits.map((hit: { id: string }) => hit.id)).not.toContain(id);
    expect((await query('carol', '...')).body).toEqual({ hits: [] });
    expect((await t.memory('mem/forget', { agent_id: 'carol', provenance: 'punct' }, 'carol')).body).toEqual({ deleted: 1 });
  });
});
