import type { Migration } from '@agentinfra/core';

/**
 * `parent_delegation_id`: the delegation whose token created this one (null
 * when a device key or the bridge key did), indexed so that revoking a
 * delegation can find and revoke every delegation made from it.
 */
export const identityDelegationParent: Migration = {
  async up(knex) {
    await knex.schema.alterTable('identity_delegations', (table) => {
      table.string('parent_delegation_id', 64).nullable();
      table.index(['parent_delegation_id'], 'identity_delegations_parent_index');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('identity_delegations', (table) => {
      table.dropIndex(['parent_delegation_id'], 'identity_delegations_parent_index');
      table.dropColumn('parent_delegation_id');
    });
  },
};
