import { migrateLatest } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { identityMigrations } from './index.js';

const TABLE = 'identity_migrations';

describe.each(sqlDatabases())('the agent name search migration on $name', ({ create }) => {
  it('fills in the search form of every existing display name', async () => {
    const { db, cleanup } = await create();
    try {
      const before = Object.fromEntries(Object.entries(identityMigrations).filter(([name]) => name < '20261203000100'));
      // Up to this migration only: later ones have tests of their own.
      const through = Object.fromEntries(Object.entries(identityMigrations).filter(([name]) => name <= '20261203000100_agent_name_search'));
      await migrateLatest({ knex: db.knex, table: TABLE, migrations: before });
      // More agents than one batch of the migration, so it pages.
      const agents = Array.from({ length: 1203 }, (_, index) => ({
        agent_id: `agent-${String(index).padStart(4, '0')}`,
        display_name: `Ägent Nº ${index}`,
        created_at: 1,
      }));
      agents.push({ agent_id: 'elodie', display_name: 'E\u0301LODIE Ünal', created_at: 1 });
      for (let start = 0; start < agents.length; start += 100) await db.knex('identity_agents').insert(agents.slice(start, start + 100));
      expect(await migrateLatest({ knex: db.knex, table: TABLE, migrations: through })).toEqual(['20261203000100_agent_name_search']);
      const rows = (await db.knex('identity_agents').select('agent_id', 'display_name_search').orderBy('agent_id')) as Array<{
        agent_id: string;
        display_name_search: string | null;
      }>;
      expect(rows).toHaveLength(1204);
      expect(rows.filter((row) => row.display_name_search === null)).toEqual([]);
      expect(rows[0]).toEqual({ agent_id: 'agent-0000', display_name_search: 'ägent nº 0' });
      expect(rows[1202]).toEqual({ agent_id: 'agent-1202', display_name_search: 'ägent nº 1202' });
      expect(rows[1203]).toEqual({ agent_id: 'elodie', display_name_search: 'élodie ünal' });
    } finally {
      await cleanup();
    }
  });
});
