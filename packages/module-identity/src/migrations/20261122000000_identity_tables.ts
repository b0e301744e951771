import type { Migration } from '@agentinfra/core';

/** Agents, devices, delegations, secrets and team membership. */
export const identityTables: Migration = {
  async up(knex) {
    await knex.schema.createTable('identity_agents', (table) => {
      table.string('agent_id', 128).primary();
      table.string('display_name', 256).notNullable();
      table.bigInteger('created_at').notNullable();
    });
    await knex.schema.createTable('identity_devices', (table) => {
      table.string('device_id', 64).primary();
      table.string('agent_id', 128).notNullable().index();
      table.string('label', 256).notNullable();
      table.string('key_hash', 64).notNullable().unique();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('expires_at').notNullable();
      table.bigInteger('revoked_at').nullable();
    });
    await knex.schema.createTable('identity_delegations', (table) => {
      table.string('delegation_id', 64).primary();
      table.string('token_hash', 64).notNullable().unique();
      table.string('from_agent', 128).notNullable().index();
      table.string('to_agent', 128).notNullable();
      table.text('scope').notNullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('expires_at').notNullable();
      table.bigInteger('revoked_at').nullable();
    });
    await knex.schema.createTable('identity_secrets', (table) => {
      table.string('agent_id', 128).notNullable();
      table.string('key', 256).notNullable();
      table.text('sealed').notNullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('updated_at').notNullable();
      table.primary(['agent_id', 'key']);
    });
    await knex.schema.createTable('identity_team_members', (table) => {
      table.string('team', 64).notNullable();
      table.string('agent_id', 128).notNullable().index();
      table.bigInteger('added_at').notNullable();
      table.primary(['team', 'agent_id']);
    });
  },
  async down(knex) {
    for (const table of ['identity_team_members', 'identity_secrets', 'identity_delegations', 'identity_devices', 'identity_agents']) {
      await knex.schema.dropTable(table);
    }
  },
};
