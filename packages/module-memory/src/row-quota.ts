import { assertWithinQuota, type Clock, type SettingsService } from '@agentinfra/core';
import type { Knex } from 'knex';

/** How long (ms) an agent's counted rows, and the quota setting, are trusted before they are read again. */
export const RECOUNT_MS = 60_000;
/** An agent found at its quota is counted again at most this often (ms) before a write is refused. */
const RECOUNT_AT_QUOTA_MS = 1_000;

/** A per-agent cap on the rows of one table, checked before each write. */
export interface RowQuota {
  /**
   * Counts one more row for `agentId` and runs `write`, or refuses it when the
   * agent already holds the quota's number of rows (counted again first, when
   * the count is over a second old, so that rows deleted meanwhile are seen).
   * The row is taken off the count again when `write` fails or resolves
   * `false` (it created no row, e.g. it replaced one), so that only stored
   * rows use up the quota.
   * @returns what `write` resolved.
   * @throws ConflictError (409, details `{ quota, used }`) at the quota (`write` is not run); what `write` throws.
   */
  insert(agentId: string, write: () => Promise<boolean>): Promise<boolean>;
  /** Takes `rows` deleted rows off the agent's count. */
  release(agentId: string, rows: number): void;
}

/**
 * A {@link RowQuota} on `table` (with an `agent_id` column, indexed) whose
 * limit is the integer setting `setting`. The count is kept per process: read
 * with `count(*)` at an agent's first write and again once a minute, and
 * moved by this process's own writes and deletions in between, so writes of
 * other replicas within the minute may pass the quota by that much (a soft
 * limit that keeps one agent from filling the disk, not an exact one).
 * @param what the rows' name in the refusal (`memories`, `kv entries`).
 * @param release how the agent makes room, for the refusal (`forget some with /mem/forget first`).
 */
export function createRowQuota(options: {
  knex: () => Knex;
  table: string;
  setting: string;
  what: string;
  release: string;
  settings: () => SettingsService;
  clock: Clock;
}): RowQuota {
  const { knex, table, setting, what, release, clock } = options;
  const counted = new Map<string, { rows: number; countedAt: number }>();
  /** Counts under way, by agent: concurrent writes wait for the same one and then share its entry. */
  const counting = new Map<string, Promise<void>>();
  let limit: { value: number; readAt: number } | null = null;

  const limitNow = async (now: number): Promise<number> => {
    if (limit === null || now - limit.readAt >= RECOUNT_MS) limit = { value: await options.settings().get<number>(setting), readAt: now };
    return limit.value;
  };
  // One count(*) at a time per agent: a burst of first writes each counting on its own got its own
  // entry, saw the count from before the burst, and all passed the quota.
  const count = async (agentId: string, now: number) => {
    let running = counting.get(agentId);
    if (running === undefined) {
      running = (async () => {
        const row = (await knex()(table).count({ n: '*' }).where({ agent_id: agentId }).first()) as { n: number | string } | undefined;
        counted.set(agentId, { rows: Number(row?.n ?? 0), countedAt: now });
      })().finally(() => counting.delete(agentId));
      counting.set(agentId, running);
    }
    await running;
    return counted.get(agentId) as { rows: number; countedAt: number };
  };

  return {
    async insert(agentId, write) {
      const now = clock.now();
      const quota = await limitNow(now);
      let entry = counted.get(agentId);
      if (entry === undefined || now - entry.countedAt >= RECOUNT_MS) entry = await count(agentId, now);
      if (entry.rows >= quota && now - entry.countedAt >= RECOUNT_AT_QUOTA_MS) entry = await count(agentId, now);
      assertWithinQuota({ agentId, used: entry.rows, quota, what, setting, release });
      entry.rows += 1;
      // A write that stored nothing gave its slot back only at the next recount: failed writes and
      // replaced kv keys used up the quota until then. A recount during the write did not see the
      // row, so the slot is given back only to the count it was taken from.
      let created = false;
      try {
        created = await write();
        return created;
      } finally {
        if (!created && counted.get(agentId) === entry) entry.rows = Math.max(0, entry.rows - 1);
      }
    },
    release(agentId, rows) {
      const entry = counted.get(agentId);
      if (entry) entry.rows = Math.max(0, entry.rows - rows);
    },
  };
}
