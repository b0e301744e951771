import type { Migration } from '@agentinfra/core';

/**
 * Bytes each agent's live artifacts take (pending registrations at their
 * declared size, committed ones at theirs), kept with every register and
 * purge so that /register checks the agent's quota with one row. Filled from
 * the artifacts stored so far.
 */
export const artifactsUsage: Migration = {
  async up(knex) {
    await knex.schema.createTable('artifacts_usage', (table) => {
      table.string('agent_id', 128).primary();
      table.bigInteger('bytes').notNullable();
    });
    await knex.raw(
      `insert into artifacts_usage (agent_id, bytes)
       select agent_id, sum(size) from artifacts_items group by agent_id`,
    );
  },
  async down(knex) {
    await knex.schema.dropTable('artifacts_usage');
  },
};
