import { migrateLatest } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { meshMigrations } from './index.js';

const TABLE = 'mesh_migrations';
const NAME = '20261203000000_mesh_unlinked_psks';

describe.each(sqlDatabases())('the unlinked PSKs migration on $name', ({ create }) => {
  it('deletes the PSKs of pairs no ACL links, and keeps those an ACL links in either direction', async () => {
    const { db, cleanup } = await create();
    try {
      const before = Object.fromEntries(Object.entries(meshMigrations).filter(([name]) => name < NAME));
      const through = Object.fromEntries(Object.entries(meshMigrations).filter(([name]) => name <= NAME));
      await migrateLatest({ knex: db.knex, table: TABLE, migrations: before });
      const acl = (from_agent: string, to_agent: string) => ({ from_agent, to_agent, proto: 'tcp', port: 22, created_at: 1 });
      await db.knex('mesh_acls').insert([acl('alice', 'bob'), acl('dave', 'carol')]);
      const psk = (agent_a: string, agent_b: string) => ({ agent_a, agent_b, sealed: `sb1.${agent_a}.${agent_b}`, rotated_at: 1 });
      await db.knex('mesh_psks').insert([psk('alice', 'bob'), psk('alice', 'carol'), psk('bob', 'carol'), psk('carol', 'dave')]);
      expect(await migrateLatest({ knex: db.knex, table: TABLE, migrations: through })).toEqual([NAME]);
      const kept = await db.knex('mesh_psks').select('agent_a', 'agent_b').orderBy(['agent_a', 'agent_b']);
      expect(kept).toEqual([
        { agent_a: 'alice', agent_b: 'bob' },
        { agent_a: 'carol', agent_b: 'dave' },
      ]);
    } finally {
      await cleanup();
    }
  });
});
