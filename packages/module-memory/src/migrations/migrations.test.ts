import { migrationTableOf } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { memoryMigrations } from './index.js';

const TABLES = ['memory_records', 'memory_sets', 'memory_set_members', 'memory_kv', 'memory_meta'];

const source: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(memoryMigrations).sort(),
  getMigrationName: (name) => name,
  getMigration: async (name) => memoryMigrations[name] as Knex.Migration,
};

describe.each(sqlDatabases())('agent-memory migrations on $name', ({ create }) => {
  it('apply, roll back to nothing, and apply again', async () => {
    const { db, cleanup } = await create();
    try {
      const config = { migrationSource: source, tableName: migrationTableOf('agent-memory') };
      const present = async () => {
        const found: string[] = [];
        for (const table of TABLES) if (await db.knex.schema.hasTable(table)) found.push(table);
        return found;
      };
      await db.knex.migrate.latest(config);
      expect(await present()).toEqual(TABLES);
      await db.knex.migrate.rollback(config, true);
      expect(await present()).toEqual([]);
      await db.knex.migrate.latest(config);
      expect(await present()).toEqual(TABLES);
    } finally {
      await cleanup();
    }
  });
});
