import type { ModuleMigrations } from '@agentinfra/core';
import { artifactsTables } from './20261122000200_artifacts_tables.js';
import { artifactsUsage } from './20261130000000_artifacts_usage.js';
import { artifactsObjectRemovals } from './20261203000000_artifacts_object_removals.js';

/** agent-artifacts migrations, applied in name order with the table `artifacts_migrations`. */
export const artifactsMigrations: ModuleMigrations = {
  '20261122000200_artifacts_tables': artifactsTables,
  '20261130000000_artifacts_usage': artifactsUsage,
  '20261203000000_artifacts_object_removals': artifactsObjectRemovals,
};
