/**
 * Candidate rows that `/mem/query` requests of one process read at once
 * (#11). A query holds `k + 10` of them (its candidates per leg) from the
 * start of its search to its hits: a k = 100 query over 32 KB memories moves
 * megabytes through the event loop in many pieces, and eight such queries
 * interleaved filled whole iterations with their pieces. With this bound a
 * k = 100 query runs alone, and up to six k = 10 queries run together.
 */
export const QUERY_CANDIDATE_BUDGET = 128;

/** A counting semaphore whose holders take different weights, shared fairly between keys. */
export interface QueryBulkhead {
  /**
   * Runs `work` once `weight` units are free (at most the capacity: a
   * heavier request takes all of it). Waiting requests of one `key` (an
   * agent) start in arrival order; the keys that have requests waiting take
   * turns (round robin), so one agent's backlog delays another agent's
   * request by at most one of its waiting requests (beyond those already
   * running), not by all of them. The request
   * whose turn it is is never overtaken by a lighter one that fits sooner.
   * @returns what `work` returns; the units are freed however it ends.
   */
  run<T>(key: string, weight: number, work: () => Promise<T>): Promise<T>;
}

interface Waiter {
  weight: number;
  start(): void;
}

/** A {@link QueryBulkhead} of `capacity` units (the search itself is not queued when it is free). */
export function createQueryBulkhead(capacity: number): QueryBulkhead {
  let used = 0;
  // Each key's waiting requests; the Map's order is the turn order (a key goes to the back once served).
  const waiting = new Map<string, Waiter[]>();

  const startWaiting = () => {
    for (const [key, queue] of waiting) {
      const next = queue[0] as Waiter;
      if (used + next.weight > capacity) return;
      queue.shift();
      waiting.delete(key);
      if (queue.length > 0) waiting.set(key, queue);
      used += next.weight;
      next.start();
    }
  };

  return {
    async run(key, weight, work) {
      const units = Math.min(Math.max(1, weight), capacity);
      if (waiting.size === 0 && used + units <= capacity) used += units;
      else {
        await new Promise<void>((start) => {
          const queue = waiting.get(key);
          if (queue) queue.push({ weight: units, start });
          else waiting.set(key, [{ weight: units, start }]);
        });
      }
      try {
        return await work();
      } finally {
        used -= units;
        startWaiting();
      }
    },
  };
}
