import type { ModuleMigrations } from '@agentinfra/core';
import { memoryTables } from './20261122000100_memory_tables.js';
import { memoryRecordsAgentIndex } from './20261125000100_memory_records_agent_index.js';
import { memoryRecordsProvenanceIndex } from './20261127000100_memory_records_provenance_index.js';
import { memoryVectorRemovals } from './20261128000100_memory_vector_removals.js';

/** agent-memory migrations, applied in name order with the table `memory_migrations`. */
export const memoryMigrations: ModuleMigrations = {
  '20261122000100_memory_tables': memoryTables,
  '20261125000100_memory_records_agent_index': memoryRecordsAgentIndex,
  '20261127000100_memory_records_provenance_index': memoryRecordsProvenanceIndex,
  '20261128000100_memory_vector_removals': memoryVectorRemovals,
};
