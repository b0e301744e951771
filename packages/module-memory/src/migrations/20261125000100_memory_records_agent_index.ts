import type { Migration } from '@agentinfra/core';

/**
 * An index that lists one agent's memories newest first without sorting
 * all of them (the console's Memory page and `/admin/memories/list` with
 * `agent_id`, #16): ids are time-ordered, so `(agent_id, id)` is that order.
 */
export const memoryRecordsAgentIndex: Migration = {
  async up(knex) {
    await knex.schema.alterTable('memory_records', (table) => {
      table.index(['agent_id', 'id'], 'memory_records_agent_id_idx');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('memory_records', (table) => {
      table.dropIndex(['agent_id', 'id'], 'memory_records_agent_id_idx');
    });
  },
};
