import { AgentInfraError, chunks, InputError, NotFoundError, SQL_ID_CHUNK } from '@agentinfra/core';
import type { MemoryDeps } from './memory-deps.js';
import { byCodeUnit, lockOwnMemories } from './record-locks.js';
import type { SetGetRequest, SetPutRequest, SetResponse } from './schemas.js';

/** Named sets of an agent's memory ids (`/set/put`, `/set/get`). */
export function createMemorySets(deps: Pick<MemoryDeps, 'sql' | 'clock'>) {
  const knex = () => deps.sql.knex;

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
        const known = await lockOwnMemories(deps.sql, trx, input.agent_id, add);
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
