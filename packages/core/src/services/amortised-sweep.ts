/** Calls between two sweeps, at least; more when many entries are kept (amortised O(1) per call). */
const MIN_CALLS_BETWEEN_SWEEPS = 1024;

/**
 * A sweep of an in-process map run every so many calls, for the embedded
 * default's memory stores (no timer is started, so it never keeps the
 * process alive). Each call counts; once as many calls have passed as the
 * last sweep left entries (at least 1024), the next call deletes every entry
 * for which `done(value, now)` is true. The work is amortised O(1) per call
 * and the map stays within about twice its live size.
 * @param done whether an entry can go at `now` (ms since the epoch); it may tidy the entry it keeps.
 * @returns the function to call once per operation, with the current time.
 */
export function amortisedSweep<K, V>(entries: Map<K, V>, done: (value: V, now: number) => boolean): (now: number) => void {
  let callsSinceSweep = 0;
  // Set from what the last sweep left, not the current size: with a new key on every call the size grows as fast
  // as the call count, so a threshold read from it is never reached and nothing is swept again (2M keys kept).
  let callsBeforeSweep = MIN_CALLS_BETWEEN_SWEEPS;
  return (now) => {
    callsSinceSweep += 1;
    if (callsSinceSweep < callsBeforeSweep) return;
    callsSinceSweep = 0;
    for (const [key, value] of entries) if (done(value, now)) entries.delete(key);
    callsBeforeSweep = Math.max(MIN_CALLS_BETWEEN_SWEEPS, entries.size);
  };
}
