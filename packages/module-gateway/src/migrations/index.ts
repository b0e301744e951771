import type { ModuleMigrations } from '@agentinfra/core';
import { gatewayTables } from './20261122000800_gateway_tables.js';
import { gatewayOrdersHostIdIndex } from './20261127000100_gateway_orders_host_id_index.js';
import { gatewayRevocationsCertificateKey } from './20261203000100_gateway_revocations_certificate_key.js';
import { gatewayRevocationsJobId } from './20261203000200_gateway_revocations_job_id.js';

/** agent-gateway migrations, applied in name order with the table `gateway_migrations`. */
export const gatewayMigrations: ModuleMigrations = {
  '20261122000800_gateway_tables': gatewayTables,
  '20261127000100_gateway_orders_host_id_index': gatewayOrdersHostIdIndex,
  '20261203000100_gateway_revocations_certificate_key': gatewayRevocationsCertificateKey,
  '20261203000200_gateway_revocations_job_id': gatewayRevocationsJobId,
};
