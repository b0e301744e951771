import type { Migration } from '@agentinfra/core';

/**
 * Signing-secret rotation: when `/job/put` replaces a job's secret, the
 * previous one is kept (sealed by the SecretBox with the job's context, like
 * the current one) with the time it was replaced, so callbacks carry both
 * signatures during the grace window (CONTRACT.md "Signed deliveries").
 */
export const schedulerPreviousSecret: Migration = {
  async up(knex) {
    await knex.schema.alterTable('scheduler_jobs', (table) => {
      table.text('previous_secret_sealed').nullable();
      table.bigInteger('secret_rotated_at').nullable();
    });
  },
  async down(knex) {
    await knex.schema.alterTable('scheduler_jobs', (table) => {
      table.dropColumn('previous_secret_sealed');
      table.dropColumn('secret_rotated_at');
    });
  },
};
