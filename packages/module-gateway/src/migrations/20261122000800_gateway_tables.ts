import type { Migration } from '@agentinfra/core';

/**
 * Hosts bound to agents, pending TXT claims, the ACME account, orders (as
 * state, cert-manager style), certificates, HTTP-01 tokens and revocations.
 * Private keys are SecretBox-sealed text; timestamps are ms in bigInteger.
 */
export const gatewayTables: Migration = {
  async up(knex) {
    await knex.schema.createTable('gateway_hosts', (table) => {
      table.string('host', 253).primary();
      table.string('host_id', 64).notNullable().unique();
      table.string('agent_id', 128).notNullable().index();
      table.bigInteger('bound_at').notNullable();
      table.text('ips').notNullable();
      table.bigInteger('ips_updated_at').nullable();
    });
    await knex.schema.createTable('gateway_claims', (table) => {
      table.string('agent_id', 128).notNullable();
      table.string('host', 253).notNullable();
      table.string('token', 64).notNullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('expires_at').notNullable().index();
      table.primary(['agent_id', 'host']);
    });
    await knex.schema.createTable('gateway_accounts', (table) => {
      table.string('directory_url', 512).primary();
      table.text('account_url').notNullable();
      table.text('key_sealed').notNullable();
      table.bigInteger('created_at').notNullable();
    });
    await knex.schema.createTable('gateway_orders', (table) => {
      table.string('order_id', 64).primary();
      table.string('host', 253).notNullable();
      table.string('host_id', 64).notNullable();
      table.string('agent_id', 128).notNullable();
      table.string('active_host', 253).nullable().unique();
      table.string('status', 16).notNullable();
      table.string('reason', 16).notNullable();
      table.string('challenge', 16).notNullable();
      table.string('directory_url', 512).notNullable();
      table.text('acme_order_url').nullable();
      table.text('key_sealed').nullable();
      table.string('job_id', 64).nullable();
      table.integer('attempts').notNullable().defaultTo(0);
      table.text('last_error').nullable();
      table.text('problem').nullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('updated_at').notNullable();
      table.bigInteger('finished_at').nullable();
      table.index(['host', 'created_at']);
      table.index(['status']);
    });
    await knex.schema.createTable('gateway_certificates', (table) => {
      table.string('host', 253).primary();
      table.string('cert_id', 64).notNullable().unique();
      table.string('host_id', 64).notNullable();
      table.string('agent_id', 128).notNullable();
      table.string('order_id', 64).notNullable();
      table.string('directory_url', 512).notNullable();
      table.text('chain_pem').notNullable();
      table.text('key_sealed').notNullable();
      table.string('serial', 128).notNullable();
      table.bigInteger('not_before').notNullable();
      table.bigInteger('not_after').notNullable().index();
      table.bigInteger('issued_at').notNullable();
    });
    await knex.schema.createTable('gateway_http_tokens', (table) => {
      table.string('token', 256).primary();
      table.text('key_authorization').notNullable();
      table.string('order_id', 64).notNullable();
      table.bigInteger('expires_at').notNullable().index();
    });
    await knex.schema.createTable('gateway_revocations', (table) => {
      table.string('revocation_id', 64).primary();
      table.string('host', 253).notNullable();
      table.string('serial', 128).notNullable();
      table.string('directory_url', 512).notNullable();
      table.text('chain_pem').notNullable();
      table.integer('reason').notNullable();
      table.string('status', 16).notNullable();
      table.integer('attempts').notNullable().defaultTo(0);
      table.text('last_error').nullable();
      table.text('problem').nullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('revoked_at').nullable();
      table.index(['host']);
    });
  },
  async down(knex) {
    for (const table of [
      'gateway_revocations',
      'gateway_http_tokens',
      'gateway_certificates',
      'gateway_orders',
      'gateway_accounts',
      'gateway_claims',
      'gateway_hosts',
    ]) {
      await knex.schema.dropTable(table);
    }
  },
};
