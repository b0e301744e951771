import { migrationRoundTrip, moduleMigrator, sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { postboxMigrations } from './index.js';

const TABLES = ['postbox_addresses', 'postbox_messages', 'postbox_rules', 'postbox_webhooks', 'postbox_mime_removals'];

const config = moduleMigrator('agent-postbox', postboxMigrations);

describe.each(sqlDatabases())('agent-postbox migrations on $name', ({ create }) => {
  it('apply, roll back to nothing, and apply again', async () => {
    const { db, cleanup } = await create();
    try {
      expect(await migrationRoundTrip(db, 'agent-postbox', postboxMigrations, TABLES)).toEqual([TABLES, [], TABLES]);
    } finally {
      await cleanup();
    }
  });

  // /list with `folder` or `unread_only` reads only the matching messages after the cursor, not the whole mailbox.
  it.for([
    ['folder', "and folder = 'Receipts'", 'postbox_messages_folder_index'],
    ['unread_only', 'and read_at is null', 'postbox_messages_unread_index'],
  ] as const)('lists with %s from its own index, in order, without sorting', async ([, filter, index], { skip }) => {
    const { db, cleanup } = await create();
    try {
      if (db.knex.client.config.client !== 'better-sqlite3') skip('the plan is checked on SQLite; PostgreSQL plans by statistics');
      await db.knex.migrate.latest(config);
      const plan = (await db.knex.raw(
        `explain query plan select * from postbox_messages where agent_id = 'a' and direction = 'in' and seq > 0 ${filter} order by seq limit 51`,
      )) as Array<{ detail: string }>;
      const details = plan.map((step) => step.detail).join('\n');
      expect(details).toContain(index);
      expect(details).not.toContain('TEMP B-TREE');
    } finally {
      await cleanup();
    }
  });
});
