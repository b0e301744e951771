import type { ModuleMigrations } from '@agentinfra/core';
import { postboxTables } from './20261122000900_postbox_tables.js';
import { postboxOperatorColumns } from './20261124000100_postbox_operator_columns.js';
import { postboxMimeRefIndex } from './20261126000100_postbox_mime_ref_index.js';
import { postboxListFilterIndexes } from './20261127000100_postbox_list_filter_indexes.js';
import { postboxMimeRemovals } from './20261203000100_postbox_mime_removals.js';

/** agent-postbox migrations, applied in name order with the table `postbox_migrations`. */
export const postboxMigrations: ModuleMigrations = {
  '20261122000900_postbox_tables': postboxTables,
  '20261124000100_postbox_operator_columns': postboxOperatorColumns,
  '20261126000100_postbox_mime_ref_index': postboxMimeRefIndex,
  '20261127000100_postbox_list_filter_indexes': postboxListFilterIndexes,
  '20261203000100_postbox_mime_removals': postboxMimeRemovals,
};
