import { ConfigError, migrateLatest, pendingMigrations } from '@agentinfra/core';
import { coreMigrations } from '@agentinfra/core/testing';
import { describe, expect, it } from 'vitest';
import { migrationRoundTrip, moduleMigrator } from './module-migrations.js';
import { sqlDatabases } from './sql-databases.js';

const TABLES = ['core_jobs', 'core_settings', 'core_job_locks', 'core_audit', 'core_audit_state'];

describe.each(sqlDatabases())('core migrations on $name', ({ create }) => {
  it('apply, roll back to nothing, and apply again', async () => {
    const { db, cleanup } = await create();
    try {
      expect(await migrationRoundTrip(db, 'core', coreMigrations, TABLES)).toEqual([TABLES, [], TABLES]);
    } finally {
      await cleanup();
    }
  });

  it('leaves a database a newer build migrated ready for this one, and refuses to migrate it', async () => {
    const { db, cleanup } = await create();
    try {
      const options = { knex: db.knex, table: 'core_migrations', migrations: coreMigrations };
      await migrateLatest(options);
      await db.knex('core_migrations').insert({ name: '20991231000000_core_from_the_future', batch: 9, migration_time: new Date() });
      expect(await pendingMigrations(options)).toEqual([]);
      const refused = await migrateLatest(options).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as Error).message).toContain(
        'migrated by a newer agentinfra: core_migrations records 20991231000000_core_from_the_future',
      );
    } finally {
      await cleanup();
    }
  });

  it('marks queued grouped jobs that are already due as ready, and no others', async () => {
    const { db, cleanup } = await create();
    const config = moduleMigrator('core', coreMigrations);
    try {
      for (const name of Object.keys(coreMigrations).sort()) {
        if (name < '20261129000000') await db.knex.migrate.up({ ...config, name });
      }
      const now = Date.now();
      const job = (id: string, status: string, runAt: number, group: string | null) => ({
        id,
        name: 'test.job',
        payload: 'null',
        status,
        run_at: runAt,
        attempts: 0,
        max_attempts: 5,
        job_group: group,
        created_at: now,
        updated_at: now,
      });
      await db
        .knex('core_jobs')
        .insert([
          job('jb_due', 'queued', now - 1_000, 'tenant:a'),
          job('jb_later', 'queued', now + 3_600_000, 'tenant:a'),
          job('jb_plain', 'queued', now - 1_000, null),
          job('jb_running', 'running', now - 1_000, 'tenant:b'),
        ]);
      await db.knex.migrate.latest(config);
      const rows = await db.knex('core_jobs').select('id', 'group_ready').orderBy('id');
      expect(rows.map((row: { id: string; group_ready: number }) => [row.id, Number(row.group_ready)])).toEqual([
        ['jb_due', 1],
        ['jb_later', 0],
        ['jb_plain', 0],
        ['jb_running', 0],
      ]);
    } finally {
      await cleanup();
    }
  });
});
