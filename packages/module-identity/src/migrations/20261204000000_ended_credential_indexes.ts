import type { Migration } from '@agentinfra/core';

/**
 * Indexes for the hourly sweep of ended credentials: device keys and
 * delegations by `expires_at` and by `revoked_at`, so that each of its
 * batches (`expires_at < ? or revoked_at < ?`) reads the rows it deletes
 * from two index ranges instead of scanning the whole table.
 */
export const identityEndedCredentialIndexes: Migration = {
  async up(knex) {
    for (const table of ['identity_devices', 'identity_delegations']) {
      await knex.schema.alterTable(table, (builder) => {
        builder.index(['expires_at'], `${table}_expires_at_index`);
        builder.index(['revoked_at'], `${table}_revoked_at_index`);
      });
    }
  },
  async down(knex) {
    for (const table of ['identity_delegations', 'identity_devices']) {
      await knex.schema.alterTable(table, (builder) => {
        builder.dropIndex(['revoked_at'], `${table}_revoked_at_index`);
        builder.dropIndex(['expires_at'], `${table}_expires_at_index`);
      });
    }
  },
};
