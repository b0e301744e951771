import { randomBytes } from 'node:crypto';
import { postgresAvailability, testDatabaseUrl } from '@agentinfra/test-services';
import { describe, expect, it } from 'vitest';
import { createPostgresDatabase } from './database.js';

const own = { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] as string[] };
const source = { table: 'records', key: 'id', text: 'body', owner: 'agent_id', scopes: 'scope' };
const record = (id: string, body: string) => ({ id, agent_id: 'agent-a', body, scope: '["self"]' });

describe.runIf(postgresAvailability().available)('postgres lexical index: documents in NFKC', () => {
  it('rebuilds, at the next ensure, the documents an index built before NFKC made of the text as written', async () => {
    const schema = `lex_${randomBytes(6).toString('hex')}`;
    const db = createPostgresDatabase({ url: testDatabaseUrl(), schema, poolMax: 2 });
    try {
      await db.knex.schema.createTable('records', (table) => {
        table.string('id').primary();
        table.string('agent_id').notNullable();
        table.text('body').notNullable();
        table.text('scope').notNullable();
      });
      await db
        .knex('records')
        .insert([record('r1', 'invoice ＩＮＶ８８２３１ paid'), record('r2', 'the resume\u0301'), record('r3', 'plain words')]);
      await db.lexicalIndex({ table: 'records_lex', source }).ensure();
      // What an index of the previous version holds: documents of the text as written, and no text form recorded.
      await db.knex.raw(
        `update records_lex_docs d set doc = to_tsvector('english', regexp_replace(r.body, '[^[:alnum:]]+', ' ', 'g'))
         from records r where r.id = d.id`,
      );
      await db.knex.raw(`delete from records_lex_meta where key = 'text_form'`);
      const version = async (id: string) =>
        (await db.knex.raw(`select xmin::text as v from records_lex_docs where id = ?`, [id])).rows[0].v;
      const plainVersion = await version('r3');
      const index = db.lexicalIndex({ table: 'records_lex', source });
      expect(await index.query({ text: 'ＩＮＶ８８２３１', k: 5, filter: own })).toEqual([]);

      await index.ensure();
      expect((await index.query({ text: 'ＩＮＶ８８２３１', k: 5, filter: own })).map((hit) => hit.id)).toEqual(['r1']);
      expect((await index.query({ text: 'resume\u0301', k: 5, filter: own })).map((hit) => hit.id)).toEqual(['r2']);
      expect((await index.query({ text: 'plain', k: 5, filter: own })).map((hit) => hit.id)).toEqual(['r3']);
      expect(await version('r3')).toBe(plainVersion);
      expect(await index.count()).toBe(3);
    } finally {
      await db.knex.raw(`drop schema if exists "${schema}" cascade`);
      await db.close();
    }
  });
});
