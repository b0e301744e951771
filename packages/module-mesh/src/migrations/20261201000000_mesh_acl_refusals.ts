import type { Migration } from '@agentinfra/core';

/**
 * Refusals: `refuser` removed an ACL that put `refused`'s peer into its
 * configuration, so `refused` may not put one again (see the module README,
 * "ACLs"). Keyed by the pair in that order: /acl/put looks up exactly one row.
 */
export const meshAclRefusals: Migration = {
  async up(knex) {
    await knex.schema.createTable('mesh_acl_refusals', (table) => {
      table.string('refuser', 128).notNullable();
      table.string('refused', 128).notNullable();
      table.bigInteger('created_at').notNullable();
      table.primary(['refuser', 'refused']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('mesh_acl_refusals');
  },
};
