/** UTC offsets of an IANA time zone and their changes, read through Intl (no time zone database of our own). */

/** Step of the scan for UTC offset changes; two changes less than a day apart are not told apart. */
const TRANSITION_SCAN_STEP_MS = 86_400_000;

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

function offsetFormat(timezone: string): Intl.DateTimeFormat {
  let format = offsetFormats.get(timezone);
  if (!format) {
    if (offsetFormats.size >= 1_000) offsetFormats.clear();
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' });
    offsetFormats.set(timezone, format);
  }
  return format;
}

/** The UTC offset of `timezone` at `at` (ms since epoch), as Intl names it: `GMT`, `GMT-04:00`, `GMT+05:30`. */
function utcOffsetName(timezone: string, at: number): string {
  // "7/1/2026, GMT-04:00": the offset is the last word.
  const text = offsetFormat(timezone).format(at);
  return text.slice(text.lastIndexOf(' ') + 1);
}

/** Minutes east of UTC for an offset name from `utcOffsetName`. */
export function offsetMinutes(name: string): number {
  const match = /^GMT([+-])(\d{2}):(\d{2})(?::\d{2})?$/.exec(name);
  if (!match) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return match[1] === '-' ? -minutes : minutes;
}

/** A UTC offset change of a time zone: the first second with the new offset (ms since epoch) and the offsets around it. */
export interface OffsetChange {
  at: number;
  before: string;
  after: string;
}

/**
 * The changes of the UTC offset of `timezone` in `[from, to)`. Scans daily, then bisects to the second.
 */
export function offsetChanges(timezone: string, from: number, to: number): OffsetChange[] {
  const changes: OffsetChange[] = [];
  let before = Math.floor(from / 1000) * 1000;
  let offset = utcOffsetName(timezone, before);
  while (before < to) {
    const after = before + TRANSITION_SCAN_STEP_MS;
    const next = utcOffsetName(timezone, after);
    if (next !== offset) {
      let [low, high] = [before, after];
      while (high - low > 1000) {
        const middle = low + Math.floor((high - low) / 2000) * 1000;
        if (utcOffsetName(timezone, middle) === offset) low = middle;
        else high = middle;
      }
      changes.push({ at: high, before: offset, after: utcOffsetName(timezone, high) });
      offset = next;
    }
    before = after;
  }
  return changes;
}
