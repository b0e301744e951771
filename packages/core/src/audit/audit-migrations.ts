import type { Knex } from 'knex';
import type { Migration } from '../kernel/migrations.js';
import { GENESIS_HASH } from './audit-chain.js';

/**
 * `core_audit` (the append-only, hash-chained security events) and
 * `core_audit_state` (one row: the head of the chain, which every append
 * locks, and the anchor left by the retention sweep).
 */
export const auditMigration: Migration = {
  async up(knex: Knex) {
    await knex.schema.createTable('core_audit', (table) => {
      table.bigInteger('seq').primary();
      table.string('id', 40).notNullable().unique();
      table.bigInteger('at').notNullable();
      table.string('actor_kind', 16).notNullable();
      table.string('actor_id', 128).nullable();
      table.string('actor_agent', 128).nullable();
      table.string('agent_id', 128).nullable();
      table.string('action', 64).notNullable();
      table.string('target', 512).nullable();
      table.string('outcome', 16).notNullable();
      table.string('client', 64).nullable();
      table.string('request_id', 128).nullable();
      table.text('detail').nullable();
      table.string('prev_hash', 64).notNullable();
      table.string('hash', 64).notNullable();
      table.index(['at']);
      table.index(['agent_id', 'seq']);
      table.index(['actor_agent', 'seq']);
      table.index(['action', 'seq']);
    });
    await knex.schema.createTable('core_audit_state', (table) => {
      table.integer('id').primary();
      table.bigInteger('head_seq').notNullable();
      table.string('head_hash', 64).notNullable();
      table.bigInteger('anchor_seq').notNullable();
      table.string('anchor_hash', 64).notNullable();
    });
    await knex('core_audit_state').insert({ id: 1, head_seq: 0, head_hash: GENESIS_HASH, anchor_seq: 0, anchor_hash: GENESIS_HASH });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('core_audit_state');
    await knex.schema.dropTable('core_audit');
  },
};
