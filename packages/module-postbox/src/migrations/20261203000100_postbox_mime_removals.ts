import type { Migration } from '@agentinfra/core';

/**
 * `postbox_mime_removals`: raw MIME blobs (`mime_ref`, owned by the postbox)
 * of deleted messages, queued in the transaction that deletes the messages
 * and removed from the blob store after it commits, so a removal that fails
 * or is cut short by a crash is finished later instead of being lost (see
 * `mime-removals.ts`). `token` is new at each queueing, so a drain that read
 * an entry does not dequeue it when another deletion queued it again meanwhile.
 */
export const postboxMimeRemovals: Migration = {
  async up(knex) {
    await knex.schema.createTable('postbox_mime_removals', (table) => {
      table.string('mime_ref', 255).primary();
      table.string('token', 36).notNullable();
    });
  },
  async down(knex) {
    await knex.schema.dropTable('postbox_mime_removals');
  },
};
