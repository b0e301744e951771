import type { ModuleMigrations } from '@agentinfra/core';
import { gatewayTables } from './20261122000800_gateway_tables.js';

/** agent-gateway migrations, applied in name order with the table `gateway_migrations`. */
export const gatewayMigrations: ModuleMigrations = {
  '20261122000800_gateway_tables': gatewayTables,
};
