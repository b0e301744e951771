import type { ModuleMigrations } from '@agentinfra/core';
import { schedulerTables } from './20261122000700_scheduler_tables.js';

/** agent-scheduler migrations, applied in name order with the table `scheduler_migrations`. */
export const schedulerMigrations: ModuleMigrations = {
  '20261122000700_scheduler_tables': schedulerTables,
};
