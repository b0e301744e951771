import { RUNS } from './job-rows.js';
import type { SchedulerDeps } from './service-deps.js';

const DAY_MS = 86_400_000;
/** Runs deleted per statement, so one sweep never holds a long lock. */
const PRUNE_BATCH = 1_000;

/**
 * Deletes finished runs (`succeeded` or `failed`) that finished more than
 * `retentionDays` days before now, in batches. Queued and running runs are
 * kept however old they are.
 * @param signal checked before each batch (the job's).
 * @returns how many runs were deleted.
 * @throws the signal's reason once it aborted; the batches not deleted are left for the next run.
 */
export async function pruneFinishedRuns(
  deps: Pick<SchedulerDeps, 'sql' | 'clock'>,
  retentionDays: number,
  signal?: AbortSignal,
): Promise<number> {
  const knex = deps.sql.knex;
  const cutoff = deps.clock.now() - retentionDays * DAY_MS;
  let deleted = 0;
  for (;;) {
    signal?.throwIfAborted();
    const ids = (
      (await knex(RUNS)
        .select('id')
        .whereIn('status', ['succeeded', 'failed'])
        .where('finished_at', '<', cutoff)
        .limit(PRUNE_BATCH)) as Array<{ id: string }>
    ).map((row) => row.id);
    if (ids.length === 0) return deleted;
    deleted += await knex(RUNS).whereIn('id', ids).whereIn('status', ['succeeded', 'failed']).delete();
    if (ids.length < PRUNE_BATCH) return deleted;
  }
}
