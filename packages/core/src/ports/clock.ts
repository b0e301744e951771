/** Source of the current time, injectable so tests can move it. */
export interface Clock {
  /** Current time in milliseconds since the Unix epoch. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** ISO 8601 UTC with `Z` and millisecond precision (CONTRACT.md timestamps). */
export function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}
