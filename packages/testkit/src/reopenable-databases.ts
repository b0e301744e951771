import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPostgresDatabase } from '@agentinfra/adapter-postgres';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import type { SqlDatabase } from '@agentinfra/core';
import { postgresAvailability, testDatabaseUrl } from '@agentinfra/test-services';

/** A database that can be opened several times (one connection pool per kernel), as replicas or a restarted server see it. */
export interface ReopenableDatabase {
  /** A new connection pool on the same data. */
  open(): SqlDatabase;
  /** Removes the data (the SQLite folder, or the PostgreSQL schema with CASCADE). Pools opened must be closed first. */
  cleanup(): Promise<void>;
}

/** One database kind of the test matrix. */
export interface ReopenableDatabaseEntry {
  name: 'sqlite' | 'postgres';
  create(): Promise<ReopenableDatabase>;
}

async function sqlite(): Promise<ReopenableDatabase> {
  const folder = await mkdtemp(join(tmpdir(), 'agentinfra-reopenable-'));
  const filename = join(folder, 'test.db');
  return {
    open: () => createSqliteDatabase({ filename }),
    cleanup: () => rm(folder, { recursive: true, force: true }),
  };
}

/** A fresh schema `t_<hex>` of the test PostgreSQL database. */
export async function reopenablePostgres(options: { poolMax?: number } = {}): Promise<ReopenableDatabase> {
  const url = testDatabaseUrl();
  const schema = `t_${randomBytes(6).toString('hex')}`;
  return {
    open: () => createPostgresDatabase({ url, schema, poolMax: options.poolMax ?? 5 }),
    async cleanup() {
      const admin = createPostgresDatabase({ url, poolMax: 1 });
      try {
        await admin.knex.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await admin.close();
      }
    },
  };
}

/** SQLite always; PostgreSQL when reachable (same gating as the testkit's `sqlDatabases()`). */
export function reopenableDatabases(): ReopenableDatabaseEntry[] {
  const entries: ReopenableDatabaseEntry[] = [{ name: 'sqlite', create: sqlite }];
  if (postgresAvailability().available) entries.push({ name: 'postgres', create: () => reopenablePostgres() });
  return entries;
}
