import { isoTimestamp, NotFoundError } from '@agentinfra/core';
import type { MemoryConfig } from './config.js';
import type { MemoryDeps } from './memory-deps.js';
import { createRowQuota } from './row-quota.js';
import type { KvDeleteRequest, KvDeleteResponse, KvGetRequest, KvGetResponse, KvPutRequest, KvPutResponse } from './schemas.js';
import { assertTeamScopes, normalizeScopes } from './scopes.js';
import { createSerialByKey } from './serial-by-key.js';
import { assertMaxBytes } from './size-limits.js';

/** Scoped key/value entries of an agent (`/kv/put`, `/kv/get`). */
export function createMemoryKv(deps: Pick<MemoryDeps, 'sql' | 'clock' | 'teams' | 'settings'>, config: MemoryConfig) {
  const knex = () => deps.sql.knex;
  const quota = createRowQuota({
    knex,
    table: 'memory_kv',
    setting: 'memory_max_kv_entries_per_agent',
    what: 'kv entries',
    release: 'delete some with /kv/delete first',
    settings: () => deps.settings,
    clock: deps.clock,
  });
  // Puts of one key run in turn: concurrent puts of a new key each found it absent, each took a
  // slot of the quota, and those past it were refused although only one key was created.
  const puts = createSerialByKey();

  /**
   * Replaces the value and scope of `key`, or inserts the key under the quota when the agent has
   * no such key. @returns the time stored as `updated_at`.
   */
  async function store(agentId: string, key: string, entry: { value: string; scope: string }): Promise<number> {
    const at = deps.clock.now();
    const row = { ...entry, updated_at: at };
    const replace = async () => (await knex()('memory_kv').where({ agent_id: agentId, key }).update(row)) > 0;
    // Replacing a value takes no room: only a new key counts against the quota.
    if (await replace()) return at;
    await quota.insert(agentId, async () => {
      const inserted = await knex()('memory_kv')
        .insert({ agent_id: agentId, key, created_at: at, ...row })
        .onConflict(['agent_id', 'key'])
        .ignore()
        .returning('key');
      if (inserted.length > 0) return true;
      // Another replica created the key since: this put replaces its value.
      await replace();
      return false;
    });
    return at;
  }

  return {
    /**
     * Stores `value` (any JSON value) under `key` for `agent_id` with its
     * scopes, replacing an earlier value and scope.
     * @returns `{ key, updated_at }`.
     * @throws PayloadTooLargeError (413) when the JSON of `value` is over `memory.maxValueBytes` (default 64 KiB);
     *   NotAllowedError (403) for a team the agent is not in; ConflictError (409) when the agent holds its quota of keys
     *   (setting `memory_max_kv_entries_per_agent`); replacing the value of a key it has always works.
     */
    async kvPut(input: KvPutRequest): Promise<KvPutResponse> {
      const value = JSON.stringify(input.value);
      assertMaxBytes(value, 'value', config.maxValueBytes);
      const scopes = normalizeScopes(input.scope);
      await assertTeamScopes(deps.teams, input.agent_id, scopes);
      const at = await puts.run(JSON.stringify([input.agent_id, input.key]), () =>
        store(input.agent_id, input.key, { value, scope: JSON.stringify(scopes) }),
      );
      return { key: input.key, updated_at: isoTimestamp(at) };
    },

    /**
     * Deletes `key` of `agent_id`, whatever its scope.
     * @returns `{ deleted }`: 1, or 0 when the agent had no such key.
     */
    async kvDelete(input: KvDeleteRequest): Promise<KvDeleteResponse> {
      const deleted = await knex()('memory_kv').where({ agent_id: input.agent_id, key: input.key }).delete();
      quota.release(input.agent_id, deleted);
      return { deleted };
    },

    /**
     * Reads `key` of `agent_id` when its stored scope shares an entry with
     * the requested `scope` (CONTRACT.md: scope enforced on reads).
     * @returns `{ key, value, scope, updated_at }` with the stored scope.
     * @throws NotAllowedError (403) when a requested `team:<name>` is a team the agent is not in;
     *   NotFoundError (404) when the key is absent or stored under none of the requested scopes (the same answer).
     */
    async kvGet(input: KvGetRequest): Promise<KvGetResponse> {
      const scopes = normalizeScopes(input.scope);
      await assertTeamScopes(deps.teams, input.agent_id, scopes);
      const row = (await knex()('memory_kv')
        .select('value', 'scope', 'updated_at')
        .where({ agent_id: input.agent_id, key: input.key })
        .first()) as { value: string; scope: string; updated_at: number } | undefined;
      const stored = row ? (JSON.parse(row.scope) as string[]) : [];
      if (!row || !stored.some((scope) => scopes.includes(scope))) {
        throw new NotFoundError(`Agent "${input.agent_id}" has no kv entry "${input.key}" in the requested scopes.`);
      }
      return { key: input.key, value: JSON.parse(row.value), scope: stored, updated_at: isoTimestamp(Number(row.updated_at)) };
    },
  };
}
