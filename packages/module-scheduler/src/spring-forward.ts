import { Cron } from 'croner';
import { CRON_RULES } from './cron-rules.js';
import { offsetChanges, offsetMinutes } from './utc-offsets.js';

/**
 * The fire of a fixed-time cron pattern that a spring-forward gap of
 * `timezone` swallowed in `(after, until)`, moved to the first valid time
 * after the gap (the instant of the offset change), or `null` when no gap
 * in that span swallowed one. Croner moves such a fire itself when the gap
 * lies within one local day (02:30 in New York runs at 03:00), but not when
 * the gap spans midnight (America/Nuuk: 23:00 → 00:00 on a Saturday), where
 * it would skip that day's, week's or year's fire. A fire swallowed by a gap
 * is one of the pattern's instants at the offset before the change that
 * falls in `[change, change + offset step)`.
 * @param after ms since epoch, exclusive.
 * @param until ms since epoch, exclusive: croner's own next fire, or the end of the horizon scanned.
 */
export function fireSwallowedBySpringForward(options: {
  expression: string;
  timezone: string;
  after: number;
  until: number;
}): number | null {
  const { expression, timezone, after, until } = options;
  for (const change of offsetChanges(timezone, after, until)) {
    const before = offsetMinutes(change.before);
    const step = offsetMinutes(change.after) - before;
    if (step <= 0 || change.at <= after || change.at >= until) continue;
    const atOldOffset = new Cron(expression, { paused: true, utcOffset: before, ...CRON_RULES });
    const candidate = atOldOffset.nextRun(new Date(change.at - 1000))?.getTime();
    if (candidate !== undefined && candidate < change.at + step * 60_000) return change.at;
  }
  return null;
}
