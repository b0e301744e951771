import type { ModuleMigrations } from '@agentinfra/core';
import { schedulerTables } from './20261122000700_scheduler_tables.js';
import { schedulerPreviousSecret } from './20261126000400_scheduler_previous_secret.js';
import { schedulerRunsFinishedIndex } from './20261126000500_scheduler_runs_finished_index.js';

/** agent-scheduler migrations, applied in name order with the table `scheduler_migrations`. */
export const schedulerMigrations: ModuleMigrations = {
  '20261122000700_scheduler_tables': schedulerTables,
  '20261126000400_scheduler_previous_secret': schedulerPreviousSecret,
  '20261126000500_scheduler_runs_finished_index': schedulerRunsFinishedIndex,
};
