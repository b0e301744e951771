import type { Migration } from '@agentinfra/core';

/**
 * The `gateway.revoke` job of each revocation (its core job id), so the
 * sweep can tell a pending revocation whose job died (failed for good
 * without recording it, or deleted) and drop its sealed certificate key.
 * Null on rows written before.
 */
export const gatewayRevocationsJobId: Migration = {
  async up(knex) {
    await knex.schema.alterTable('gateway_revocations', (table) => {
      table.string('job_id', 64).nullable();
    });
  },
  async down(knex) {
    await knex.schema.alterTable('gateway_revocations', (table) => {
      table.dropColumn('job_id');
    });
  },
};
