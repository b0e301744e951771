import type { ModuleMigrations } from '@agentinfra/core';
import { identityTables } from './20261122000000_identity_tables.js';
import { identityDelegationParent } from './20261126000200_delegation_parent.js';
import { identityDelegationChainHolder } from './20261203000000_delegation_chain_holder.js';
import { identityAgentNameSearch } from './20261203000100_agent_name_search.js';
import { identityEndedCredentialIndexes } from './20261204000000_ended_credential_indexes.js';

/** agent-identity migrations, applied in name order with the table `identity_migrations`. */
export const identityMigrations: ModuleMigrations = {
  '20261122000000_identity_tables': identityTables,
  '20261126000200_delegation_parent': identityDelegationParent,
  '20261203000000_delegation_chain_holder': identityDelegationChainHolder,
  '20261203000100_agent_name_search': identityAgentNameSearch,
  '20261204000000_ended_credential_indexes': identityEndedCredentialIndexes,
};
