import { ConflictError } from '@agentinfra/core';
import type { Knex } from 'knex';
import type { AddressPool } from './address-pool.js';

/**
 * Allocates the next free mesh address from `pool` inside `trx`.
 *
 * The pool's row in `mesh_address_pools` holds the last offset handed out;
 * incrementing it takes the row lock (PostgreSQL) or the write lock
 * (SQLite) until `trx` ends, so concurrent registrations get distinct
 * offsets, and a rolled-back registration gives its offset back. Offsets
 * only grow: an address is never handed out twice. Addresses already held
 * by a peer (from an earlier, overlapping prefix) are skipped.
 * @throws ConflictError (409) when the pool is exhausted.
 */
export async function allocateAddress(trx: Knex.Transaction, pool: AddressPool): Promise<string> {
  await trx('mesh_address_pools').insert({ prefix: pool.prefix, last_offset: 0 }).onConflict('prefix').ignore();
  for (;;) {
    await trx('mesh_address_pools').where({ prefix: pool.prefix }).increment('last_offset', 1);
    const row = (await trx('mesh_address_pools').select('last_offset').where({ prefix: pool.prefix }).first()) as {
      last_offset: number | string;
    };
    const offset = Number(row.last_offset);
    if (offset > pool.lastOffset) {
      throw new ConflictError(`The mesh prefix ${pool.prefix} has no free address left; configure a larger mesh prefix.`);
    }
    const address = pool.addressAt(offset);
    const taken = await trx('mesh_peers').select('agent_id').where({ address }).first();
    if (!taken) return address;
  }
}
