import type { Migration } from '@agentinfra/core';

/**
 * Indexes for /list with `folder` or `unread_only`, so that a page (or an
 * empty poll) reads only the matching messages after the cursor instead
 * of filtering the agent's whole mailbox: `(agent_id, direction, folder,
 * seq)`, and `(agent_id, direction, seq)` over unread messages only
 * (`read_at IS NULL`, a partial index on both engines).
 */
export const postboxListFilterIndexes: Migration = {
  async up(knex) {
    await knex.schema.alterTable('postbox_messages', (table) => {
      table.index(['agent_id', 'direction', 'folder', 'seq'], 'postbox_messages_folder_index');
      table.index(['agent_id', 'direction', 'seq'], 'postbox_messages_unread_index', { predicate: knex.whereNull('read_at') });
    });
  },
  async down(knex) {
    await knex.schema.alterTable('postbox_messages', (table) => {
      table.dropIndex(['agent_id', 'direction', 'seq'], 'postbox_messages_unread_index');
      table.dropIndex(['agent_id', 'direction', 'folder', 'seq'], 'postbox_messages_folder_index');
    });
  },
};
