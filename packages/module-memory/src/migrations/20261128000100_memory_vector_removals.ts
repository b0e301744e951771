import type { Migration } from '@agentinfra/core';

/**
 * `memory_vector_removals`: ids of forgotten semantic memories whose vectors
 * may still be in a vector index. `/mem/forget` adds them in the transaction
 * that deletes the memories and removes the vectors after it commits, so a
 * removal that fails or is cut short by a crash is finished later instead of
 * being lost (see `forgotten-vectors.ts`).
 */
export const memoryVectorRemovals: Migration = {
  async up(knex) {
    await knex.schema.createTable('memory_vector_removals', (table) => {
      table.string('id', 64).primary();
    });
  },
  async down(knex) {
    await knex.schema.dropTable('memory_vector_removals');
  },
};
