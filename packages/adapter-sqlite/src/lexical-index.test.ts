import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLexicalIndexContract } from '@agentinfra/core/testing';
import { createSqliteDatabase } from './database.js';

runLexicalIndexContract({
  name: 'sqlite (FTS5)',
  async create() {
    const folder = await mkdtemp(join(tmpdir(), 'agentinfra-lexical-'));
    const db = createSqliteDatabase({ filename: join(folder, 'agentinfra.db') });
    return {
      knex: db.knex,
      index: (options) => db.lexicalIndex(options),
      async cleanup() {
        await db.close();
        await rm(folder, { recursive: true, force: true });
      },
    };
  },
});
