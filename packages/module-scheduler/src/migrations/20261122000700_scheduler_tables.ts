import type { Migration } from '@agentinfra/core';

/**
 * Jobs and their runs. Timestamps are bigint milliseconds. A job's signing
 * secret is stored sealed by the SecretBox (never in plain text). Each
 * (re)start of a job's fire chain (put with a new cadence, resume, repair)
 * bumps its `fire_epoch`, so a cancelled fire never blocks the same instant
 * of a new chain. A run is
 * unique per (job, scheduled instant): the row that makes each instant fire
 * once however many replicas run.
 */
export const schedulerTables: Migration = {
  async up(knex) {
    await knex.schema.createTable('scheduler_jobs', (table) => {
      table.string('id', 64).primary();
      table.string('agent_id', 128).notNullable();
      table.string('name', 128).notNullable();
      table.string('cadence', 256).notNullable();
      table.string('cron', 256).nullable();
      table.bigInteger('interval_ms').nullable();
      table.string('timezone', 64).notNullable();
      table.text('callback_url').notNullable();
      table.text('secret_sealed').notNullable();
      table.integer('max_attempts').notNullable();
      table.string('catch_up', 8).notNullable();
      table.string('status', 16).notNullable();
      table.bigInteger('anchor_at').notNullable();
      table.bigInteger('next_run_at').nullable();
      table.string('next_fire_queue_id', 64).nullable();
      table.integer('fire_epoch').notNullable().defaultTo(0);
      table.bigInteger('created_at').notNullable();
      table.bigInteger('updated_at').notNullable();
      table.unique(['agent_id', 'name'], { indexName: 'scheduler_jobs_agent_name_uq' });
      table.index(['status', 'next_run_at'], 'scheduler_jobs_status_next_idx');
    });
    await knex.schema.createTable('scheduler_runs', (table) => {
      table.string('id', 64).primary();
      table.string('job_id', 64).notNullable();
      table.string('agent_id', 128).notNullable();
      table.bigInteger('scheduled_for').notNullable();
      table.string('status', 16).notNullable();
      table.integer('attempts').notNullable().defaultTo(0);
      table.integer('max_attempts').notNullable();
      table.integer('series').notNullable().defaultTo(0);
      table.text('error').nullable();
      table.string('queue_id', 64).nullable();
      table.bigInteger('started_at').nullable();
      table.bigInteger('finished_at').nullable();
      table.bigInteger('created_at').notNullable();
      table.bigInteger('updated_at').notNullable();
      table.unique(['job_id', 'scheduled_for'], { indexName: 'scheduler_runs_job_instant_uq' });
      table.index(['status', 'updated_at'], 'scheduler_runs_status_updated_idx');
    });
  },
  async down(knex) {
    await knex.schema.dropTable('scheduler_runs');
    await knex.schema.dropTable('scheduler_jobs');
  },
};
