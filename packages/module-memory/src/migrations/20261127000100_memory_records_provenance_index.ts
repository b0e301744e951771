import type { Migration } from '@agentinfra/core';

/**
 * An index that lists the memories with one provenance tag newest first
 * across all agents (`/admin/memories/list` with `provenance` and no
 * `agent_id`) without walking every memory: ids are time-ordered, so
 * `(provenance, id)` is that order.
 */
export const memoryRecordsProvenanceIndex: Migration = {
  async up(knex) {
    await knex.schema.alterTable('memory_records', (table) => {
      table.index(['provenance', 'id'], 'memory_records_provenance_id_idx');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('memory_records', (table) => {
      table.dropIndex(['provenance', 'id'], 'memory_records_provenance_id_idx');
    });
  },
};
