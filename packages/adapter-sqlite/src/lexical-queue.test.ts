import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SqlDatabase } from '@agentinfra/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withConnection } from './connection-lease.js';
import { createSqliteDatabase } from './database.js';
import { LEXICAL_FLUSH_INTERVAL_MS } from './lexical-index.js';
import { LEXICAL_FLUSH_BATCH, LEXICAL_FLUSH_CHARS, lexicalQueueOn } from './lexical-queue.js';
import { sqliteLexicalTables } from './lexical-tables.js';

const own = { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] as string[] };
const source = {
  table: 'notes',
  key: 'id',
  text: 'body',
  owner: 'agent_id',
  scopes: 'scope',
  only: { column: 'kind', equals: 'semantic' },
};
const note = (id: string, body: string) => ({ id, agent_id: 'agent-a', kind: 'semantic', body, scope: '["self"]' });
/** `chars` characters of distinct 7-letter words (a 32-bit LCG: the same text every run). */
function words(chars: number, seed: number): string {
  let state = seed >>> 0;
  let text = '';
  while (text.length < chars) {
    for (let letter = 0; letter < 7; letter += 1) {
      state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
      text += String.fromCharCode(97 + ((state >>> 24) % 26));
    }
    text += ' ';
  }
  return text.slice(0, chars);
}

describe('sqlite lexical index: the queue of rows to index', () => {
  let db: SqlDatabase | undefined;
  let folder = '';

  afterEach(async () => {
    await db?.close();
    db = undefined;
    await rm(folder, { recursive: true, force: true });
  });

  async function open() {
    folder = await mkdtemp(join(tmpdir(), 'agentinfra-lexical-queue-'));
    db = createSqliteDatabase({ filename: join(folder, 'agentinfra.db') });
    await db.knex.schema.createTable('notes', (table) => {
      table.string('id').primary();
      table.string('agent_id').notNullable();
      table.string('kind').notNullable();
      table.text('body').notNullable();
      table.text('scope').notNullable();
    });
    return { knex: db.knex, index: db.lexicalIndex({ table: 'notes_lex', source }) };
  }

  const count = async (knex: SqlDatabase['knex'], table: string) => Number((await knex(table).count({ n: '*' }))[0]?.n);

  it('queues a write in its transaction and indexes it in the background, in batches', async () => {
    const { knex, index } = await open();
    await index.ensure();
    const rows = Array.from({ length: LEXICAL_FLUSH_BATCH * 2 + 5 }, (_, i) =>
      note(`n${String(i).padStart(4, '0')}`, `harbour crane ${i}`),
    );
    await knex.transaction(async (trx) => {
      for (let i = 0; i < rows.length; i += 100) await trx('notes').insert(rows.slice(i, i + 100));
      expect(await count(trx, 'notes_lex_queue')).toBe(rows.length);
      expect(await count(trx, 'notes_lex_docs')).toBe(0);
    });
    await vi.waitFor(async () => expect(await count(knex, 'notes_lex_queue')).toBe(0), { timeout: 20 * LEXICAL_FLUSH_INTERVAL_MS });
    expect(await count(knex, 'notes_lex_docs')).toBe(rows.length);
    expect(await index.query({ text: 'crane', k: 1_000, filter: own })).toHaveLength(rows.length);
  });

  it('bounds a batch by rows and by characters of text, taking at least one row', async () => {
    const { knex, index } = await open();
    await index.ensure();
    (index as unknown as { close(): void }).close();
    const large = Math.ceil(LEXICAL_FLUSH_CHARS * 0.6);
    await knex('notes').insert([note('a1', words(LEXICAL_FLUSH_CHARS * 2, 1)), note('a2', words(large, 2)), note('a3', words(large, 3))]);
    await knex('notes').insert(
      Array.from({ length: LEXICAL_FLUSH_BATCH + 4 }, (_, i) => note(`b${String(i).padStart(4, '0')}`, `short note ${i}`)),
    );
    const tables = sqliteLexicalTables('notes_lex', source);
    const flush = () => withConnection(knex, (connection) => lexicalQueueOn(connection, tables).flushBatch());
    expect(await flush()).toEqual({ handled: 1, full: true });
    expect(await flush()).toEqual({ handled: 2, full: true });
    expect(await flush()).toEqual({ handled: LEXICAL_FLUSH_BATCH, full: true });
    expect(await flush()).toEqual({ handled: 4, full: false });
    expect(await flush()).toEqual({ handled: 0, full: false });
    expect(await count(knex, 'notes_lex_docs')).toBe(LEXICAL_FLUSH_BATCH + 7);
  });

  it('indexes a backlog of large rows before a query in several batches, polling I/O in between', async () => {
    const { knex, index } = await open();
    await index.ensure();
    (index as unknown as { close(): void }).close();
    const rows = Array.from({ length: 6 }, (_, i) => note(`n${i}`, `${words(LEXICAL_FLUSH_CHARS * 0.7, i + 10)} marker`));
    await knex('notes').insert(rows);
    let server: Server | undefined;
    let client: Socket | undefined;
    try {
      let received = false;
      server = createServer((socket) => socket.once('data', () => (received = true)));
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      const connected = connect({ port, host: '127.0.0.1' });
      client = connected;
      await new Promise<void>((resolve) => connected.once('connect', resolve));
      // Delivered to the server's socket now; its 'data' callback runs the next time the loop polls for I/O.
      connected.write('x');
      const hits = await index.query({ text: 'marker', k: 10, filter: own });
      expect(received).toBe(true);
      expect(hits.map((hit) => hit.id).sort()).toEqual(rows.map((row) => row.id));
      expect(await count(knex, 'notes_lex_queue')).toBe(0);
    } finally {
      client?.destroy();
      await new Promise((resolve) => server?.close(resolve));
    }
  });

  it('replaces the doc of a queued key that is still indexed', async () => {
    const { knex, index } = await open();
    await index.ensure();
    await knex('notes').insert(note('n1', 'amber lantern'));
    expect((await index.query({ text: 'lantern', k: 5, filter: own })).map((hit) => hit.id)).toEqual(['n1']);
    await knex('notes_lex_queue').insert({ id: 'n1' });
    expect((await index.query({ text: 'lantern', k: 5, filter: own })).map((hit) => hit.id)).toEqual(['n1']);
    expect(await count(knex, 'notes_lex_docs')).toBe(1);
    expect(await count(knex, 'notes_lex_queue')).toBe(0);
  });

  it('drains the queue before a query, so a committed write is found at once', async () => {
    const { knex, index } = await open();
    await index.ensure();
    await knex('notes').insert(note('n1', 'the lighthouse keeper'));
    expect((await index.query({ text: 'lighthouse', k: 5, filter: own })).map((hit) => hit.id)).toEqual(['n1']);
    expect(await count(knex, 'notes_lex_queue')).toBe(0);
  });

  it('stops flushing when the database closes, and indexes what stayed queued at the next start', async () => {
    const { knex, index } = await open();
    await index.ensure();
    (index as unknown as { close(): void }).close();
    await knex('notes').insert(note('n1', 'a quiet orchard'));
    await new Promise((resolve) => setTimeout(resolve, 3 * LEXICAL_FLUSH_INTERVAL_MS));
    expect(await count(knex, 'notes_lex_queue')).toBe(1);
    const again = db?.lexicalIndex({ table: 'notes_lex', source });
    await again?.ensure();
    expect(await count(knex, 'notes_lex_queue')).toBe(0);
    expect((await again?.query({ text: 'orchard', k: 5, filter: own }))?.map((hit) => hit.id)).toEqual(['n1']);
  });

  it('replaces the triggers of the first version without rebuilding the index they kept', async () => {
    const { knex, index } = await open();
    await knex('notes').insert([note('n1', 'copper kettle'), note('n2', 'iron kettle')]);
    await index.ensure();
    expect(await index.count()).toBe(2);
    for (const suffix of ['insert', 'delete', 'update']) {
      await knex.raw(`drop trigger "notes_lex_on_${suffix}"`);
      await knex.raw(`create trigger "notes_lex_after_${suffix}" after ${suffix} on notes begin select 1; end`);
    }
    const progress: number[] = [];
    await db?.lexicalIndex({ table: 'notes_lex', source }).ensure({ onProgress: (done) => progress.push(done) });
    expect(progress).toEqual([]);
    const triggers = await knex('sqlite_master').where({ type: 'trigger', tbl_name: 'notes' }).pluck('name');
    expect(triggers.sort()).toEqual(['notes_lex_on_delete', 'notes_lex_on_insert', 'notes_lex_on_update']);
    await knex('notes').where({ id: 'n1' }).delete();
    expect((await index.query({ text: 'kettle', k: 5, filter: own })).map((hit) => hit.id)).toEqual(['n2']);
  });
});
