import { coreConfigSchema, newCredential, newMasterKey } from '@agentinfra/core';
import { createCapturedLogger } from '@agentinfra/core/testing';
import { postgresAvailability, testDatabaseUrl } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './adapters.js';

describe.runIf(postgresAvailability().available)('openDatabase on PostgreSQL', () => {
  it('logs routine server notices at debug and warnings at warn', async () => {
    const { logger, lines } = createCapturedLogger('debug');
    const config = coreConfigSchema.parse({ bridgeKey: newCredential('bk_'), masterKey: newMasterKey(), databaseUrl: testDatabaseUrl() });
    const database = await openDatabase(config, logger);
    try {
      await database.knex.raw('DROP TABLE IF EXISTS adapters_test_never_created');
      await database.knex.raw("DO $$ BEGIN RAISE WARNING 'adapters test warning'; END $$");
    } finally {
      await database.close();
    }
    const postgres = lines.filter((line) => line.component === 'postgres');
    expect(postgres.map((line) => [line.level, line.msg])).toEqual([
      [20, 'NOTICE: table "adapters_test_never_created" does not exist, skipping'],
      [40, 'WARNING: adapters test warning'],
    ]);
  });
});

describe('openDatabase with PostgreSQL unreachable', () => {
  it("logs knex's connection errors as JSON lines through the logger, not on the console", async () => {
    const { logger, lines } = createCapturedLogger('debug');
    const config = coreConfigSchema.parse({
      bridgeKey: newCredential('bk_'),
      masterKey: newMasterKey(),
      databaseUrl: 'postgres://app:s3cret@127.0.0.1:1/agents',
    });
    const database = await openDatabase(config, logger);
    await expect(database.ping()).rejects.toThrow(/did not answer/);
    await database.close();
    const knex = lines.filter((line) => line.component === 'knex');
    expect(knex.map((line) => line.level)).toContain(40);
    expect(JSON.stringify(knex)).toContain('ECONNREFUSED');
    expect(JSON.stringify(lines)).not.toContain('s3cret');
  });
});
