import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLexicalIndexContract } from '@agentinfra/core/testing';
import { describe, expect, it } from 'vitest';
import { countedNotesView } from './counted-reads.test-support.js';
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

describe('createSqliteLexicalIndex', () => {
  it('reads attached columns for the k hits only, not for every match it ranks', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'agentinfra-lexical-'));
    const db = createSqliteDatabase({ filename: join(folder, 'agentinfra.db') });
    try {
      await db.knex.schema.createTable('notes', (table) => {
        table.string('id').primary();
        table.string('agent_id');
        table.text('text');
        table.text('scope');
      });
      const rows = Array.from({ length: 60 }, (_, i) => ({
        id: `n${String(i).padStart(2, '0')}`,
        agent_id: 'agent-a',
        text: `orchard ${'apple '.repeat(1 + (i % 5))}`,
        scope: '["self"]',
      }));
      await db.knex('notes').insert(rows);
      const index = db.lexicalIndex({
        table: 'notes_lex',
        source: { table: 'notes', key: 'id', text: 'text', owner: 'agent_id', scopes: 'scope' },
      });
      await index.ensure();
      const reads = await countedNotesView(db.knex);
      const hits = await index.query({
        text: 'apple',
        k: 3,
        filter: { ownerAgentId: 'agent-a', includeSelf: true, teamScopes: [] },
        attach: { table: 'counted_notes', key: 'id', columns: ['text'] },
      });
      expect(hits).toHaveLength(3);
      for (const hit of hits) expect(hit.row).toEqual({ text: rows.find((row) => row.id === hit.id)?.text });
      expect(reads()).toBe(3);
    } finally {
      await db.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
