import type { Migration } from '@agentinfra/core';

/** Index for the run-retention sweep: finished runs by status and finish time. */
export const schedulerRunsFinishedIndex: Migration = {
  async up(knex) {
    await knex.schema.alterTable('scheduler_runs', (table) => {
      table.index(['status', 'finished_at'], 'scheduler_runs_status_finished_idx');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('scheduler_runs', (table) => {
      table.dropIndex(['status', 'finished_at'], 'scheduler_runs_status_finished_idx');
    });
  },
};
