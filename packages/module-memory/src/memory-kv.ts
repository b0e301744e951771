import { isoTimestamp, NotFoundError } from '@agentinfra/core';
import type { MemoryConfig } from './config.js';
import type { MemoryDeps } from './memory-deps.js';
import { createRowQuota } from './row-quota.js';
import type { KvDeleteRequest, KvDeleteResponse, KvGetRequest, KvGetResponse, KvPutRequest, KvPutResponse } from './schemas.js';
import { assertTeamScopes, normalizeScopes } from './scopes.js';
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
      // Replacing a value takes no room: only a new key counts against the quota.
      const replacing = await knex()('memory_kv').select('key').where({ agent_id: input.agent_id, key: input.key }).first();
      if (!replacing) await quota.take(input.agent_id);
      const at = deps.clock.now();
      await knex()('memory_kv')
        .insert({ agent_id: input.agent_id, key: input.key, value, scope: JSON.stringify(scopes), created_at: at, updated_at: at })
        .onConflict(['agent_id', 'key'])
        .merge({ value, scope: JSON.stringify(scopes), updated_at: at });
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
