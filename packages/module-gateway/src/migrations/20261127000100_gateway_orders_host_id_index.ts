import type { Migration } from '@agentinfra/core';

/**
 * An index that finds a host's latest order without reading its others:
 * /list and /admin/hosts/list show each bound host's latest order (by
 * `created_at`, then `order_id`), looked up by `host_id`, which the
 * `(host, created_at)` index of the first migration cannot serve.
 */
export const gatewayOrdersHostIdIndex: Migration = {
  async up(knex) {
    await knex.schema.alterTable('gateway_orders', (table) => {
      table.index(['host_id', 'created_at', 'order_id'], 'gateway_orders_host_id_latest_index');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('gateway_orders', (table) => {
      table.dropIndex(['host_id', 'created_at', 'order_id'], 'gateway_orders_host_id_latest_index');
    });
  },
};
