import type { Migration } from '@agentinfra/core';

/**
 * Memory records, sets and their members, key/value entries and the module's
 * meta table (which embedder the vectors were made with). Timestamps are
 * bigint milliseconds; `scope` and `value` columns hold JSON text.
 * Vectors live in the `VectorIndex` tables (`memory_vectors…`), not here.
 */
export const memoryTables: Migration = {
  async up(knex) {
    await knex.schema.createTable('memory_records', (table) => {
      table.string('id', 64).primary();
      table.string('agent_id', 128).notNullable();
      table.string('kind', 16).notNullable();
      table.text('text').notNullable();
      table.string('provenance', 256).notNullable();
      table.text('scope').notNullable();
      table.bigInteger('created_at').notNullable();
      table.index(['agent_id', 'provenance'], 'memory_records_agent_provenance_idx');
      table.index(['kind', 'id'], 'memory_records_kind_id_idx');
    });
    await knex.schema.createTable('memory_sets', (table) => {
      table.string('agent_id', 128).notNullable();
      table.string('name', 128).notNullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('updated_at').notNullable();
      table.primary(['agent_id', 'name']);
    });
    await knex.schema.createTable('memory_set_members', (table) => {
      table.string('agent_id', 128).notNullable();
      table.string('set_name', 128).notNullable();
      table.string('memory_id', 64).notNullable();
      table.bigInteger('added_at').notNullable();
      table.primary(['agent_id', 'set_name', 'memory_id']);
      table.index(['memory_id'], 'memory_set_members_memory_idx');
      table.foreign(['agent_id', 'set_name']).references(['agent_id', 'name']).inTable('memory_sets').onDelete('CASCADE');
      table.foreign('memory_id').references('id').inTable('memory_records').onDelete('CASCADE');
    });
    await knex.schema.createTable('memory_kv', (table) => {
      table.string('agent_id', 128).notNullable();
      table.string('key', 256).notNullable();
      table.text('value').notNullable();
      table.text('scope').notNullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('updated_at').notNullable();
      table.primary(['agent_id', 'key']);
    });
    await knex.schema.createTable('memory_meta', (table) => {
      table.string('key', 64).primary();
      table.text('value').notNullable();
      table.bigInteger('updated_at').notNullable();
    });
  },
  async down(knex) {
    for (const table of ['memory_meta', 'memory_kv', 'memory_set_members', 'memory_sets', 'memory_records']) {
      await knex.schema.dropTable(table);
    }
  },
};
