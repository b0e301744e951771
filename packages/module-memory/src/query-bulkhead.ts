/**
 * Candidate rows that `/mem/query` requests of one process read at once
 * (#11). A query holds `k + 10` of them (its candidates per leg) from the
 * start of its search to its hits: a k = 100 query over 32 KB memories moves
 * megabytes through the event loop in many pieces, and eight such queries
 * interleaved filled whole iterations with their pieces. With this bound a
 * k = 100 query runs alone, and up to six k = 10 queries run together.
 */
export const QUERY_CANDIDATE_BUDGET = 128;

/** A counting semaphore whose holders take different weights. */
export interface QueryBulkhead {
  /**
   * Runs `work` once `weight` units are free (at most the capacity: a
   * heavier request takes all of it), first come first served: a waiting
   * request is never overtaken by a lighter one that came later.
   * @returns what `work` returns; the units are freed however it ends.
   */
  run<T>(weight: number, work: () => Promise<T>): Promise<T>;
}

/** A {@link QueryBulkhead} of `capacity` units (the search itself is not queued when it is free). */
export function createQueryBulkhead(capacity: number): QueryBulkhead {
  let used = 0;
  const waiting: Array<{ weight: number; start(): void }> = [];

  const release = (weight: number) => {
    used -= weight;
    while (waiting.length > 0 && used + (waiting[0] as { weight: number }).weight <= capacity) {
      const next = waiting.shift() as { weight: number; start(): void };
      used += next.weight;
      next.start();
    }
  };

  return {
    async run(weight, work) {
      const units = Math.min(Math.max(1, weight), capacity);
      if (waiting.length === 0 && used + units <= capacity) used += units;
      else await new Promise<void>((start) => waiting.push({ weight: units, start }));
      try {
        return await work();
      } finally {
        release(units);
      }
    },
  };
}
