import type { Migration } from '@agentinfra/core';

/**
 * Addresses, messages (both directions), rules and webhook registrations.
 * Messages are ordered by the auto-incremented `seq` (the /list cursor);
 * `dedupe_key` (SHA-256 of recipient and Message-ID, inbound only) makes a
 * re-delivered message idempotent. Timestamps are ms since the epoch; JSON
 * (headers, attachments, rule match and actions, webhook events) is text.
 */
export const postboxTables: Migration = {
  async up(knex) {
    await knex.schema.createTable('postbox_addresses', (table) => {
      table.string('address', 320).primary();
      table.string('agent_id', 128).notNullable().index('postbox_addresses_agent_index');
      table.bigInteger('created_at').notNullable();
    });
    await knex.schema.createTable('postbox_messages', (table) => {
      table.increments('seq').primary();
      table.string('id', 40).notNullable().unique();
      table.string('agent_id', 128).notNullable();
      table.string('direction', 3).notNullable();
      table.string('folder', 64).notNullable();
      table.text('to_address').notNullable();
      table.text('from_address').notNullable();
      table.text('subject').notNullable();
      table.text('body').notNullable();
      table.text('html').nullable();
      table.text('headers').notNullable();
      table.text('attachments').notNullable();
      table.string('dedupe_key', 64).nullable().unique();
      table.text('mime_ref').nullable();
      table.boolean('mime_owned').notNullable().defaultTo(false);
      table.double('injection_score').notNullable();
      table.boolean('quarantined').notNullable();
      table.bigInteger('read_at').nullable();
      table.string('status', 16).notNullable();
      table.text('error').nullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('updated_at').notNullable();
      table.bigInteger('sent_at').nullable();
      table.index(['agent_id', 'direction', 'seq'], 'postbox_messages_list_index');
      table.index(['created_at'], 'postbox_messages_created_index');
    });
    await knex.schema.createTable('postbox_rules', (table) => {
      table.string('agent_id', 128).notNullable();
      table.string('name', 128).notNullable();
      table.text('match').notNullable();
      table.text('actions').notNullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('updated_at').notNullable();
      table.primary(['agent_id', 'name']);
    });
    await knex.schema.createTable('postbox_webhooks', (table) => {
      table.string('id', 40).primary();
      table.string('agent_id', 128).notNullable();
      table.string('url', 2048).notNullable();
      table.text('events').notNullable();
      table.text('secret_sealed').notNullable();
      table.text('previous_sealed').nullable();
      table.bigInteger('previous_expires_at').nullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('rotated_at').nullable();
      table.unique(['agent_id', 'url'], { indexName: 'postbox_webhooks_agent_url_unique' });
    });
  },
  async down(knex) {
    for (const table of ['postbox_webhooks', 'postbox_rules', 'postbox_messages', 'postbox_addresses']) await knex.schema.dropTable(table);
  },
};
