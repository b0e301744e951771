import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPostgresDatabase } from '@agentinfra/adapter-postgres';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import type { SqlDatabaseFixture } from '@agentinfra/core/testing';
import { postgresAvailability, testDatabaseUrl } from '@agentinfra/test-services';
import pg from 'pg';

/** One database of the test matrix. */
export interface SqlDatabaseEntry {
  name: 'sqlite' | 'postgres';
  /** A fresh, empty database; `cleanup` closes it (even if already closed) and removes what was made. */
  create(): Promise<SqlDatabaseFixture>;
}

/** A fresh SQLite file in a new temp folder; cleanup removes the folder (with its WAL files). */
async function createTestSqlite(): Promise<SqlDatabaseFixture> {
  const folder = await mkdtemp(join(tmpdir(), 'agentinfra-sqlite-'));
  const filename = join(folder, 'test.db');
  const db = createSqliteDatabase({ filename });
  return {
    db,
    openAnother: () => createSqliteDatabase({ filename }),
    async cleanup() {
      await db.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh schema `t_<12 hex digits>` in the test PostgreSQL database, so that
 * test files running in parallel never see each other's tables; cleanup
 * closes the pool and drops the schema with CASCADE over a separate connection.
 */
async function createTestPostgres(): Promise<SqlDatabaseFixture> {
  const url = testDatabaseUrl();
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const db = createPostgresDatabase({ url, schema, poolMax: 5 });
  return {
    db,
    openAnother: () => createPostgresDatabase({ url, schema, poolMax: 2 }),
    async cleanup() {
      await db.close();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

/**
 * The SQL databases every module test runs on: SQLite always, PostgreSQL when
 * {@link postgresAvailability} says so (otherwise it is left out after one
 * printed line, or the call throws under `AGENTINFRA_TEST_REQUIRE_SERVICES=1`).
 * @example describe.each(sqlDatabases())('memory service on $name', ({ create }) => { … });
 */
export function sqlDatabases(): SqlDatabaseEntry[] {
  const entries: SqlDatabaseEntry[] = [{ name: 'sqlite', create: createTestSqlite }];
  if (postgresAvailability().available) entries.push({ name: 'postgres', create: createTestPostgres });
  return entries;
}

/**
 * The embedded default alone (SQLite), for tests of a surface whose
 * behaviour does not depend on the SQL engine under it (pages in a browser,
 * the stdio MCP transport): the queries behind it run on both engines in
 * their own tests, so a second engine here repeats them at the cost of the
 * slowest files of the suite (a browser or a CLI process per test).
 */
export function embeddedDatabase(): SqlDatabaseEntry[] {
  return [{ name: 'sqlite', create: createTestSqlite }];
}
