import { migrateLatest } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { identityMigrations } from './index.js';

const TABLE = 'identity_migrations';

describe.each(sqlDatabases())('the delegation chain holder migration on $name', ({ create }) => {
  it('gives every delegation made with a token the to_agent of its chain’s first delegation', async () => {
    const { db, cleanup } = await create();
    try {
      const before = Object.fromEntries(Object.entries(identityMigrations).filter(([name]) => name < '20261203000000'));
      // Up to this migration only: later ones have tests of their own.
      const through = Object.fromEntries(
        Object.entries(identityMigrations).filter(([name]) => name <= '20261203000000_delegation_chain_holder'),
      );
      await migrateLatest({ knex: db.knex, table: TABLE, migrations: before });
      const row = (delegation_id: string, to_agent: string, parent_delegation_id: string | null) => ({
        delegation_id,
        token_hash: `hash-${delegation_id}`,
        from_agent: 'alice',
        to_agent,
        scope: '[]',
        created_at: 1,
        expires_at: 2,
        revoked_at: null,
        parent_delegation_id,
      });
      await db
        .knex('identity_delegations')
        .insert([
          row('dlg_root', 'bob', null),
          row('dlg_child', 'carol', 'dlg_root'),
          row('dlg_grandchild', 'dave', 'dlg_child'),
          row('dlg_orphan', 'erin', 'dlg_swept'),
        ]);
      expect(await migrateLatest({ knex: db.knex, table: TABLE, migrations: through })).toEqual(['20261203000000_delegation_chain_holder']);
      const held = await db.knex('identity_delegations').select('delegation_id', 'chain_to_agent').orderBy('delegation_id');
      expect(held).toEqual([
        { delegation_id: 'dlg_child', chain_to_agent: 'bob' },
        { delegation_id: 'dlg_grandchild', chain_to_agent: 'bob' },
        { delegation_id: 'dlg_orphan', chain_to_agent: null },
        { delegation_id: 'dlg_root', chain_to_agent: null },
      ]);
    } finally {
      await cleanup();
    }
  });
});
