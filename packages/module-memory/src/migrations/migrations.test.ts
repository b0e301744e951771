import { migrationRoundTrip, moduleMigrator, sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { memoryMigrations } from './index.js';

const TABLES = ['memory_records', 'memory_sets', 'memory_set_members', 'memory_kv', 'memory_meta', 'memory_vector_removals'];

const config = moduleMigrator('agent-memory', memoryMigrations);

describe.each(sqlDatabases())('agent-memory migrations on $name', ({ create }) => {
  it('apply, roll back to nothing, and apply again', async () => {
    const { db, cleanup } = await create();
    try {
      expect(await migrationRoundTrip(db, 'agent-memory', memoryMigrations, TABLES)).toEqual([TABLES, [], TABLES]);
    } finally {
      await cleanup();
    }
  });

  it('lists one agent’s memories newest first from an index, without sorting them', async ({ skip }) => {
    const { db, cleanup } = await create();
    try {
      if (db.knex.client.config.client !== 'better-sqlite3') skip('the plan is checked on SQLite; PostgreSQL plans by statistics');
      await db.knex.migrate.latest(config);
      const plan = (await db.knex.raw(
        "explain query plan select * from memory_records where agent_id = 'a' order by id desc limit 51",
      )) as Array<{
        detail: string;
      }>;
      const details = plan.map((step) => step.detail).join('\n');
      expect(details).toContain('memory_records_agent_id_idx');
      expect(details).not.toContain('TEMP B-TREE');
    } finally {
      await cleanup();
    }
  });

  it('lists the memories with one provenance across agents newest first from an index, without sorting them', async ({ skip }) => {
    const { db, cleanup } = await create();
    try {
      if (db.knex.client.config.client !== 'better-sqlite3') skip('the plan is checked on SQLite; PostgreSQL plans by statistics');
      await db.knex.migrate.latest(config);
      const plan = (await db.knex.raw(
        "explain query plan select * from memory_records where provenance = 'p' and id < 'mem_x' order by id desc limit 51",
      )) as Array<{
        detail: string;
      }>;
      const details = plan.map((step) => step.detail).join('\n');
      expect(details).toContain('memory_records_provenance_id_idx');
      expect(details).not.toContain('TEMP B-TREE');
    } finally {
      await cleanup();
    }
  });
});
