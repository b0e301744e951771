import { AgentInfraError, chunks, InputError, lockedWhen, NotFoundError, SQL_ID_CHUNK } from '@agentinfra/core';
import type { Knex } from 'knex';
import type { MemoryDeps } from './memory-deps.js';
import type { SetGetRequest, SetPutRequest, SetResponse } from './schemas.js';

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Named sets of an agent's memory ids (`/set/put`, `/set/get`). */
export function createMemorySets(deps: Pick<MemoryDeps, 'sql' | 'clock'>) {
  const knex = () => deps.sql.knex;

  /**
   * The ids among `ids` that are memories of `agentId`, read in `trx` and, where several processes
   * share the database, locked (FOR UPDATE) until it ends: a /mem/forget committing between this
   * check and the insert of the set's members made that insert break the foreign key (a 500).
   * Rows are locked in code-unit order of their ids across all chunks (`COLLATE "C"` in each),
   * so two set/puts of the same memories wait for each other instead of deadlocking.
   */
  async function existingIds(trx: Knex.Transaction, agentId: string, ids: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    const lock = deps.sql.capabilities.multiProcess;
    for (const chunk of chunks([...ids].sort(byCodeUnit), SQL_ID_CHUNK)) {
      const query = trx('memory_records').select('id').where({ agent_id: agentId }).whereIn('id', chunk);
      const rows = (await lockedWhen(lock ? query.orderByRaw('id collate "C"') : query, lock)) as Array<{ id: string }>;
      for (const row of rows) found.add(row.id);
    }
    return found;
  }

  return {
    /**
     * Creates the set `name` of `agent_id` if needed, adds `add_ids` and
     * removes `remove_ids`, in one transaction. Members must be memories the
     * agent owns; removing an id that is not a member is a no-op. Forgetting
     * a memory removes it from every set.
     * @returns `{ name, ids }`: the set after the change, ids sorted by code unit.
     * @throws InputError (400) when an id is in both lists; AgentInfraError 404 `not_found` with
     *   `details.unknown_ids` when some `add_ids` are not memories of the agent (nothing is changed).
     */
    async setPut(input: SetPutRequest): Promise<SetResponse> {
      const add = [...new Set(input.add_ids)];
      const remove = [...new Set(input.remove_ids)];
      const both = add.filter((id) => remove.includes(id));
      if (both.length > 0) {
        throw new InputError('The request body does not match the schema.', {
          fields: [{ path: 'remove_ids', message: `ids also listed in add_ids: ${both.slice(0, 10).join(', ')}` }],
        });
      }
      const at = deps.clock.now();
      const ids = await knex().transaction(async (trx) => {
        const known = await existingIds(trx, input.agent_id, add);
        const unknown = add.filter((id) => !known.has(id));
        if (unknown.length > 0) {
          throw new AgentInfraError(
            404,
            'not_found',
            `${unknown.length} of add_ids are not memories of agent "${input.agent_id}": ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ', …' : ''}.`,
            { details: { unknown_ids: unknown } },
          );
        }
        await trx('memory_sets')
          .insert({ agent_id: input.agent_id, name: input.name, created_at: at, updated_at: at })
          .onConflict(['agent_id', 'name'])
          .merge({ updated_at: at });
        // In chunks: SQLite takes at most 500 rows in one multi-row insert (a compound SELECT), and add_ids may hold 1,000.
        for (const chunk of chunks(add, SQL_ID_CHUNK)) {
          await trx('memory_set_members')
            .insert(chunk.map((id) => ({ agent_id: input.agent_id, set_name: input.name, memory_id: id, added_at: at })))
            .onConflict(['agent_id', 'set_name', 'memory_id'])
            .ignore();
        }
        if (remove.length > 0) {
          await trx('memory_set_members').where({ agent_id: input.agent_id, set_name: input.name }).whereIn('memory_id', remove).delete();
        }
        const members = (await trx('memory_set_members')
          .select('memory_id')
          .where({ agent_id: input.agent_id, set_name: input.name })) as Array<{ memory_id: string }>;
        return members.map((member) => member.memory_id);
      });
      return { name: input.name, ids: ids.sort(byCodeUnit) };
    },

    /**
     * Reads the set `name` of `agent_id` (an addition to SPEC.md).
     * @returns `{ name, ids }`, ids sorted by code unit.
     * @throws NotFoundError (404) when the agent has no set of that name.
     */
    async setGet(input: SetGetRequest): Promise<SetResponse> {
      const set = await knex()('memory_sets').select('name').where({ agent_id: input.agent_id, name: input.name }).first();
      if (!set) throw new NotFoundError(`Agent "${input.agent_id}" has no set "${input.name}".`);
      const members = (await knex()('memory_set_members')
        .select('memory_id')
        .where({ agent_id: input.agent_id, set_name: input.name })) as Array<{ memory_id: string }>;
      return { name: input.name, ids: members.map((member) => member.memory_id).sort(byCodeUnit) };
    },
  };
}
