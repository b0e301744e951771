import type { Migration } from '@agentinfra/core';

/** agent-echo's one table. */
export const echoMessages: Migration = {
  async up(knex) {
    await knex.schema.createTable('echo_messages', (table) => {
      table.increments('id');
      table.string('agent_id', 64).notNullable().index();
      table.text('text').notNullable();
      table.bigInteger('heard_at').nullable();
    });
  },
  async down(knex) {
    await knex.schema.dropTable('echo_messages');
  },
};
