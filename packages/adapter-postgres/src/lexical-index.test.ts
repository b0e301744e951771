import { randomBytes } from 'node:crypto';
import { runLexicalIndexContract } from '@agentinfra/core/testing';
import { postgresAvailability, testDatabaseUrl } from '@agentinfra/test-services';
import knexFactory from 'knex';
import { describe, expect, it } from 'vitest';
import { createPostgresDatabase } from './database.js';
import { createPgLexicalIndex } from './lexical-index.js';

const source = { table: 'records', key: 'id', text: 'text', owner: 'agent_id', scopes: 'scope' };

describe('createPgLexicalIndex options', () => {
  it('rejects prefixes and source names that are not plain identifiers', () => {
    const knex = knexFactory({ client: 'pg' });
    expect(() => createPgLexicalIndex({ knex, table: 'memory"; drop table x; --', source })).toThrow(/identifier/);
    expect(() => createPgLexicalIndex({ knex, table: 'x'.repeat(41), source })).toThrow(/40/);
    expect(() => createPgLexicalIndex({ knex, table: 'memory_lexical', source: { ...source, text: 'text; drop' } })).toThrow(RangeError);
  });
});

describe.runIf(postgresAvailability().available)('createPgLexicalIndex on a server', () => {
  runLexicalIndexContract({
    name: 'postgres (tsvector + GIN)',
    async create() {
      const schema = `lex_${randomBytes(6).toString('hex')}`;
      const db = createPostgresDatabase({ url: testDatabaseUrl(), schema, poolMax: 4 });
      return {
        knex: db.knex,
        index: (options) => db.lexicalIndex(options),
        async cleanup() {
          await db.knex.raw(`drop schema if exists "${schema}" cascade`);
          await db.close();
        },
      };
    },
  });

  it('refuses a source table that does not exist, naming it', async () => {
    const schema = `lex_${randomBytes(6).toString('hex')}`;
    const db = createPostgresDatabase({ url: testDatabaseUrl(), schema, poolMax: 2 });
    try {
      await expect(db.lexicalIndex({ table: 'memory_lexical', source }).ensure()).rejects.toThrow(/source table records does not exist/);
    } finally {
      await db.knex.raw(`drop schema if exists "${schema}" cascade`);
      await db.close();
    }
  });
});
