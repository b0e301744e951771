import type { ModuleMigrations } from '@agentinfra/core';
import { meshTables } from './20261122000500_mesh_tables.js';
import { meshAclRefusals } from './20261201000000_mesh_acl_refusals.js';
import { meshUnlinkedPsks } from './20261203000000_mesh_unlinked_psks.js';

/** agent-mesh migrations, applied in name order with the table `mesh_migrations`. */
export const meshMigrations: ModuleMigrations = {
  '20261122000500_mesh_tables': meshTables,
  '20261201000000_mesh_acl_refusals': meshAclRefusals,
  '20261203000000_mesh_unlinked_psks': meshUnlinkedPsks,
};
