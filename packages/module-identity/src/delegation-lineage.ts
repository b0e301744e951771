import type { SqlDatabase } from '@agentinfra/core';

/**
 * Whether the delegation whose parent is `parentId` was made, directly or
 * down a chain, with the token of delegation `ancestorId`: walks
 * `parent_delegation_id` up from `parentId` (one indexed lookup per level;
 * chains have no cycles, since a parent always exists before its child).
 * @param parentId the `parent_delegation_id` of the delegation in question (null: made with a device key).
 */
export async function isMadeFrom(knex: SqlDatabase['knex'], parentId: string | null, ancestorId: string): Promise<boolean> {
  let current = parentId;
  while (current !== null) {
    if (current === ancestorId) return true;
    const row = (await knex('identity_delegations').where({ delegation_id: current }).first('parent_delegation_id')) as
      | { parent_delegation_id: string | null }
      | undefined;
    current = row?.parent_delegation_id ?? null;
  }
  return false;
}
