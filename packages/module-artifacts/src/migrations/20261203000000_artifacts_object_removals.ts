import type { Migration } from '@agentinfra/core';

/**
 * `artifacts_object_removals`: blob store keys of purged artifacts whose
 * objects may still be stored. The purge adds them in the transaction that
 * deletes the artifacts and deletes the objects after it commits, so a
 * deletion that fails or is cut short by a crash is finished later (at start
 * or by the `artifacts.remove-purged-objects` job) instead of being lost
 * (see `purged-objects.ts`).
 */
export const artifactsObjectRemovals: Migration = {
  async up(knex) {
    await knex.schema.createTable('artifacts_object_removals', (table) => {
      table.string('object_key', 255).primary();
    });
  },
  async down(knex) {
    await knex.schema.dropTable('artifacts_object_removals');
  },
};
