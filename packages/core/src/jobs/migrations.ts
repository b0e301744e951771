import type { Knex } from 'knex';
import { auditMigration } from '../audit/audit-migrations.js';
import type { ModuleMigrations } from '../kernel/migrations.js';

/** Core tables: the durable job queue (and its claim lock), the service settings and the audit log. */
export const coreMigrations: ModuleMigrations = {
  '20261122000000_core_jobs': {
    async up(knex: Knex) {
      await knex.schema.createTable('core_jobs', (table) => {
        table.string('id', 64).primary();
        table.string('name', 128).notNullable();
        table.text('payload').notNullable();
        table.string('status', 16).notNullable();
        table.bigInteger('run_at').notNullable();
        table.integer('attempts').notNullable().defaultTo(0);
        table.integer('max_attempts').notNullable();
        table.string('locked_by', 64).nullable();
        table.bigInteger('locked_until').nullable();
        table.text('last_error').nullable();
        table.string('dedupe_key', 512).nullable().unique();
        table.bigInteger('scheduled_for').nullable();
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.bigInteger('finished_at').nullable();
        table.index(['status', 'run_at']);
      });
    },
    async down(knex: Knex) {
      await knex.schema.dropTable('core_jobs');
    },
  },
  '20261122000100_core_settings': {
    async up(knex: Knex) {
      await knex.schema.createTable('core_settings', (table) => {
        table.string('key', 128).primary();
        table.text('value').notNullable();
        table.bigInteger('updated_at').notNullable();
      });
    },
    async down(knex: Knex) {
      await knex.schema.dropTable('core_settings');
    },
  },
  '20261124000000_core_audit': auditMigration,
  /**
   * Fairness groups (`EnqueueOptions.group`): a nullable column indexed with
   * the status for counting a group's running jobs, and the one-row table
   * whose row lock serializes claims across processes (see `JobRunner`).
   */
  '20261127000000_core_jobs_group': {
    async up(knex: Knex) {
      await knex.schema.alterTable('core_jobs', (table) => {
        table.string('job_group', 255).nullable();
        table.index(['job_group', 'status'], 'core_jobs_group_status_index');
      });
      await knex.schema.createTable('core_job_locks', (table) => {
        table.string('name', 64).primary();
      });
      await knex('core_job_locks').insert({ name: 'claim' });
    },
    async down(knex: Knex) {
      await knex.schema.dropTable('core_job_locks');
      await knex.schema.alterTable('core_jobs', (table) => {
        table.dropIndex(['job_group', 'status'], 'core_jobs_group_status_index');
        table.dropColumn('job_group');
      });
    },
  },
  /**
   * Claim indexes (see `JobRunner.eligible`): partial indexes on the queued
   * rows only, so a claim reads the ungrouped due jobs oldest first, walks the
   * distinct groups with queued jobs, and reads each group's oldest due jobs
   * without visiting any group's backlog. The same SQL on SQLite and PostgreSQL.
   */
  '20261128000000_core_jobs_claim_indexes': {
    async up(knex: Knex) {
      await knex.raw(
        "create index core_jobs_queued_group_index on core_jobs (job_group, run_at, id) where status = 'queued' and job_group is not null",
      );
      await knex.raw(
        "create index core_jobs_queued_ungrouped_index on core_jobs (run_at, id) where status = 'queued' and job_group is null",
      );
    },
    async down(knex: Knex) {
      await knex.raw('drop index core_jobs_queued_ungrouped_index');
      await knex.raw('drop index core_jobs_queued_group_index');
    },
  },
  /**
   * Ready groups (see `JobRunner.eligible`): a queued grouped job is `group_ready`
   * (1) once it is due, and the claim walks only the groups with ready jobs, so
   * groups whose jobs all lie in the future (a scheduler job's next fire, one
   * group per agent) cost a claim nothing. Each poll first marks the jobs that
   * became due, through the index of the waiting ones by `run_at`.
   */
  '20261129000000_core_jobs_ready_groups': {
    async up(knex: Knex) {
      await knex.schema.alterTable('core_jobs', (table) => {
        table.integer('group_ready').notNullable().defaultTo(0);
      });
      await knex.raw("update core_jobs set group_ready = 1 where status = 'queued' and job_group is not null and run_at <= ?", [
        Date.now(),
      ]);
      await knex.raw('drop index core_jobs_queued_group_index');
      await knex.raw(
        "create index core_jobs_ready_group_index on core_jobs (job_group, run_at, id) where status = 'queued' and job_group is not null and group_ready = 1",
      );
      await knex.raw(
        "create index core_jobs_waiting_group_index on core_jobs (run_at) where status = 'queued' and job_group is not null and group_ready = 0",
      );
    },
    async down(knex: Knex) {
      await knex.raw('drop index core_jobs_waiting_group_index');
      await knex.raw('drop index core_jobs_ready_group_index');
      await knex.raw(
        "create index core_jobs_queued_group_index on core_jobs (job_group, run_at, id) where status = 'queued' and job_group is not null",
      );
      await knex.schema.alterTable('core_jobs', (table) => {
        table.dropColumn('group_ready');
      });
    },
  },
};
