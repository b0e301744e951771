import type { Migration } from '@agentinfra/core';

/**
 * Peers, the address pool counters, ACLs and pairwise PSKs. The ACL table is
 * keyed by `from_agent` first and indexed by `to_agent`, so one caller's
 * ACLs and visible peers are found without scanning the mesh.
 */
export const meshTables: Migration = {
  async up(knex) {
    await knex.schema.createTable('mesh_peers', (table) => {
      table.string('agent_id', 128).primary();
      table.string('pubkey', 44).notNullable().unique();
      table.string('endpoint', 300).notNullable();
      table.string('address', 45).notNullable().unique();
      table.bigInteger('registered_at').notNullable();
      table.bigInteger('updated_at').notNullable();
      table.bigInteger('last_seen').notNullable();
    });
    await knex.schema.createTable('mesh_address_pools', (table) => {
      table.string('prefix', 64).primary();
      table.bigInteger('last_offset').notNullable();
    });
    await knex.schema.createTable('mesh_acls', (table) => {
      table.string('from_agent', 128).notNullable();
      table.string('to_agent', 128).notNullable();
      table.string('proto', 8).notNullable();
      table.integer('port').notNullable();
      table.bigInteger('created_at').notNullable();
      table.primary(['from_agent', 'to_agent', 'proto', 'port']);
      table.index(['to_agent', 'from_agent'], 'mesh_acls_to_agent_index');
    });
    await knex.schema.createTable('mesh_psks', (table) => {
      table.string('agent_a', 128).notNullable();
      table.string('agent_b', 128).notNullable();
      table.text('sealed').notNullable();
      table.bigInteger('rotated_at').notNullable();
      table.primary(['agent_a', 'agent_b']);
      table.index(['agent_b'], 'mesh_psks_agent_b_index');
    });
  },
  async down(knex) {
    for (const table of ['mesh_psks', 'mesh_acls', 'mesh_address_pools', 'mesh_peers']) await knex.schema.dropTable(table);
  },
};
