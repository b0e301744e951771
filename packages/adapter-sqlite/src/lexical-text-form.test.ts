import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SqlDatabase } from '@agentinfra/core';
import { afterEach, describe, expect, it } from 'vitest';
import { withConnection } from './connection-lease.js';
import { createSqliteDatabase } from './database.js';

const own = { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] as string[] };
const source = { table: 'notes', key: 'id', text: 'body', owner: 'agent_id', scopes: 'scope' };
const note = (id: string, body: string) => ({ id, agent_id: 'agent-a', body, scope: '["self"]' });

describe('sqlite lexical index: text in NFKC', () => {
  let db: SqlDatabase | undefined;
  let folder = '';

  afterEach(async () => {
    await db?.close();
    db = undefined;
    await rm(folder, { recursive: true, force: true });
  });

  it('re-indexes, at the next ensure, rows an index built before NFKC holds as written', async () => {
    folder = await mkdtemp(join(tmpdir(), 'agentinfra-lexical-form-'));
    const filename = join(folder, 'agentinfra.db');
    db = createSqliteDatabase({ filename });
    await db.knex.schema.createTable('notes', (table) => {
      table.string('id').primary();
      table.string('agent_id').notNullable();
      table.text('body').notNullable();
      table.text('scope').notNullable();
    });
    await db.knex('notes').insert([note('n1', 'invoice ＩＮＶ８８２３１ paid'), note('n2', 'plain words')]);
    await db.lexicalIndex({ table: 'notes_lex', source }).ensure();
    // What an index of the previous version holds: n1's text indexed as written, and no text form recorded.
    await withConnection(db.knex, (connection) => {
      const rid = connection.prepare(`select rid from notes_lex_docs where id = 'n1'`).pluck().get();
      connection.prepare('delete from notes_lex_fts where rowid = ?').run(rid);
      connection.prepare('insert into notes_lex_fts (rowid, text) values (?, ?)').run(rid, 'invoice ＩＮＶ８８２３１ paid');
      connection.exec(`delete from notes_lex_meta where key = 'text_form'`);
    });
    expect(await db.lexicalIndex({ table: 'notes_lex', source }).query({ text: 'ＩＮＶ８８２３１', k: 5, filter: own })).toEqual([]);
    await db.close();

    db = createSqliteDatabase({ filename });
    const index = db.lexicalIndex({ table: 'notes_lex', source });
    await index.ensure();
    expect((await index.query({ text: 'ＩＮＶ８８２３１', k: 5, filter: own })).map((hit) => hit.id)).toEqual(['n1']);
    expect((await index.query({ text: 'plain', k: 5, filter: own })).map((hit) => hit.id)).toEqual(['n2']);
    expect(await index.count()).toBe(2);
  });
});
