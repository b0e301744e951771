import type { SqlDatabase } from '@agentinfra/core';
import { migrationRoundTrip, moduleMigrator, sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { identityMigrations } from './index.js';

const TABLES = ['identity_agents', 'identity_devices', 'identity_delegations', 'identity_secrets', 'identity_team_members'];
const SWEPT = ['identity_devices', 'identity_delegations'];

/** Names of the indexes on `table`, sorted (the test schema's on PostgreSQL). */
async function indexesOf(db: SqlDatabase, table: string): Promise<string[]> {
  if (db.dialect === 'sqlite') {
    const rows = (await db.knex.raw("select name from sqlite_master where type = 'index' and tbl_name = ?", [table])) as Array<{
      name: string;
    }>;
    return rows.map((row) => row.name).sort();
  }
  const result = (await db.knex.raw('select indexname from pg_indexes where schemaname = current_schema() and tablename = ?', [table])) as {
    rows: Array<{ indexname: string }>;
  };
  return result.rows.map((row) => row.indexname).sort();
}

describe.each(sqlDatabases())('agent-identity migrations on $name', ({ create }) => {
  it('apply, roll back to nothing, and apply again', async () => {
    const { db, cleanup } = await create();
    try {
      expect(await migrationRoundTrip(db, 'agent-identity', identityMigrations, TABLES)).toEqual([TABLES, [], TABLES]);
    } finally {
      await cleanup();
    }
  });

  it('index device keys and delegations by expires_at and revoked_at for the sweep of ended credentials', async () => {
    const { db, cleanup } = await create();
    try {
      await db.knex.migrate.latest(moduleMigrator('agent-identity', identityMigrations));
      for (const table of SWEPT) {
        expect(await indexesOf(db, table)).toEqual(expect.arrayContaining([`${table}_expires_at_index`, `${table}_revoked_at_index`]));
      }
    } finally {
      await cleanup();
    }
  });

  it('lets a sweep batch find its rows from those indexes, without scanning the table', async ({ skip }) => {
    const { db, cleanup } = await create();
    try {
      if (db.dialect !== 'sqlite') skip('the plan is checked on SQLite; PostgreSQL plans by statistics');
      await db.knex.migrate.latest(moduleMigrator('agent-identity', identityMigrations));
      for (const table of SWEPT) {
        const plan = (await db.knex.raw(
          `explain query plan select rowid from ${table} where expires_at < 1 or revoked_at < 1 limit 500`,
        )) as Array<{ detail: string }>;
        const details = plan.map((step) => step.detail).join('\n');
        expect(details).toContain(`${table}_expires_at_index`);
        expect(details).toContain(`${table}_revoked_at_index`);
        expect(details).not.toMatch(new RegExp(`SCAN ${table}\\b(?! USING)`));
      }
    } finally {
      await cleanup();
    }
  });
});
