import type { Migration } from '@agentinfra/core';

/**
 * An index on `mime_ref`, so that dropping the raw bytes of a message the
 * MIME parser refused (554) can first check, without scanning every
 * message, that no stored message refers to them.
 */
export const postboxMimeRefIndex: Migration = {
  async up(knex) {
    await knex.schema.alterTable('postbox_messages', (table) => {
      table.index(['mime_ref'], 'postbox_messages_mime_ref_index');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('postbox_messages', (table) => {
      table.dropIndex(['mime_ref'], 'postbox_messages_mime_ref_index');
    });
  },
};
