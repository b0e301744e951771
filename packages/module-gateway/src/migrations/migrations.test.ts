import { migrationRoundTrip, moduleMigrator, sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { gatewayMigrations } from './index.js';

const TABLES = [
  'gateway_hosts',
  'gateway_claims',
  'gateway_accounts',
  'gateway_orders',
  'gateway_certificates',
  'gateway_http_tokens',
  'gateway_revocations',
];

const config = moduleMigrator('agent-gateway', gatewayMigrations);

describe.each(sqlDatabases())('agent-gateway migrations on $name', ({ create }) => {
  it('apply, roll back to nothing, and apply again', async () => {
    const { db, cleanup } = await create();
    try {
      expect(await migrationRoundTrip(db, 'agent-gateway', gatewayMigrations, TABLES)).toEqual([TABLES, [], TABLES]);
    } finally {
      await cleanup();
    }
  });

  it('finds a host’s latest order from an index, without reading its other orders', async ({ skip }) => {
    const { db, cleanup } = await create();
    try {
      if (db.knex.client.config.client !== 'better-sqlite3') skip('the plan is checked on SQLite; PostgreSQL plans by statistics');
      await db.knex.migrate.latest(config);
      const plan = (await db.knex.raw(
        "explain query plan select order_id from gateway_orders where host_id = 'hst_a' order by created_at desc, order_id desc limit 1",
      )) as Array<{ detail: string }>;
      const details = plan.map((step) => step.detail).join('\n');
      expect(details).toContain('gateway_orders_host_id_latest_index');
      expect(details).not.toContain('TEMP B-TREE');
    } finally {
      await cleanup();
    }
  });
});
