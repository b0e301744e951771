import type { Migration } from '@agentinfra/core';

/**
 * What operators see (#16): each webhook's last delivery result, and an
 * index that finds quarantined mail across agents newest first without
 * scanning every message.
 */
export const postboxOperatorColumns: Migration = {
  async up(knex) {
    await knex.schema.alterTable('postbox_webhooks', (table) => {
      table.bigInteger('last_delivery_at').nullable();
      table.boolean('last_delivery_ok').nullable();
      table.integer('last_delivery_status').nullable();
      table.text('last_delivery_error').nullable();
    });
    await knex.schema.alterTable('postbox_messages', (table) => {
      table.index(['quarantined', 'seq'], 'postbox_messages_quarantine_index');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('postbox_messages', (table) => {
      table.dropIndex(['quarantined', 'seq'], 'postbox_messages_quarantine_index');
    });
    await knex.schema.alterTable('postbox_webhooks', (table) => {
      table.dropColumns('last_delivery_at', 'last_delivery_ok', 'last_delivery_status', 'last_delivery_error');
    });
  },
};
