import type { Migration } from '@agentinfra/core';

/**
 * `chain_to_agent`: for a delegation made with a delegation token, the
 * `to_agent` of the first delegation of its chain (the one a device key or
 * the bridge key made); null for that first one. Requests with any token of
 * the chain count against one rate-limit window, that of the tokens
 * `from_agent` gave `chain_to_agent`, so a holder cannot open a fresh window
 * by delegating to other agents. Rows made before it get it from their chain
 * (a child whose ancestors were already swept keeps null: its own window).
 */
export const identityDelegationChainHolder: Migration = {
  async up(knex) {
    await knex.schema.alterTable('identity_delegations', (table) => {
      table.string('chain_to_agent', 128).nullable();
    });
    await knex.raw(`
      with recursive chain (delegation_id, holder) as (
        select delegation_id, to_agent from identity_delegations where parent_delegation_id is null
        union all
        select d.delegation_id, chain.holder from identity_delegations d join chain on d.parent_delegation_id = chain.delegation_id
      )
      update identity_delegations
      set chain_to_agent = (select holder from chain where chain.delegation_id = identity_delegations.delegation_id)
      where parent_delegation_id is not null`);
  },
  async down(knex) {
    await knex.schema.alterTable('identity_delegations', (table) => {
      table.dropColumn('chain_to_agent');
    });
  },
};
