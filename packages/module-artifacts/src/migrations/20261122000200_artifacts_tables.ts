import type { Migration } from '@agentinfra/core';

/** Artifacts and the grants on them. Timestamps are ms since the epoch. */
export const artifactsTables: Migration = {
  async up(knex) {
    await knex.schema.createTable('artifacts_items', (table) => {
      table.string('artifact_id', 64).primary();
      table.string('agent_id', 128).notNullable();
      table.text('key').notNullable();
      table.string('mime', 255).notNullable();
      table.bigInteger('size').notNullable();
      table.integer('ttl_days').notNullable();
      table.string('status', 16).notNullable();
      table.string('sha256', 64).nullable();
      table.string('object_key', 255).nullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('upload_expires_at').notNullable();
      table.bigInteger('committed_at').nullable();
      table.bigInteger('expires_at').notNullable();
      table.index(['agent_id', 'created_at', 'artifact_id'], 'artifacts_items_owner_order');
      table.index(['expires_at'], 'artifacts_items_expiry');
      table.index(['status', 'created_at'], 'artifacts_items_status_age');
    });
    await knex.schema.createTable('artifacts_grants', (table) => {
      table.string('grant_id', 64).primary();
      table.string('token_hash', 64).notNullable().unique();
      table.string('artifact_id', 64).notNullable();
      table.string('to_agent', 128).notNullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('expires_at').notNullable();
      table.bigInteger('revoked_at').nullable();
      table.index(['artifact_id', 'to_agent'], 'artifacts_grants_target');
      table.index(['expires_at'], 'artifacts_grants_expiry');
    });
  },
  async down(knex) {
    await knex.schema.dropTable('artifacts_grants');
    await knex.schema.dropTable('artifacts_items');
  },
};
