import { Cron, CronDate, CronPattern } from 'croner';
import { CRON_RULES } from './cron-rules.js';
import { type OffsetChange, offsetChanges, offsetMinutes } from './utc-offsets.js';

/** Two consecutive fires of a cron expression closer together than allowed. */
export interface ShortCronGap {
  /** Time between the two fires, in ms. */
  gapMs: number;
  /** Where the gap occurs, for the error message (e.g. `23:59:59 and 00:00:00 the next day`). */
  where: string;
}

const DAY_S = 86_400;
/** How far ahead the time zone's UTC offset changes are checked (2 years). */
const TRANSITION_HORIZON_MS = 731 * 86_400_000;
/** Upper bound of fires walked around one offset change (a few are needed when no gap is short). */
const TRANSITION_MAX_FIRES = 64;
/**
 * Months walked to find two consecutive fire days. 2028–2055 is one 28-year cycle of the
 * Gregorian calendar inside 1901–2099: every year type (leap or not × weekday of 1 January),
 * hence every month layout and every pair of adjacent months, occurs in it, and they all recur
 * after any date. Fire days depend only on that layout (5/6-field patterns have no year).
 */
const CYCLE_FIRST_YEAR = 2028;
const CYCLE_YEARS = 28;

function indices(flags: number[]): number[] {
  const result: number[] = [];
  flags.forEach((flag, index) => {
    if (flag) result.push(index);
  });
  return result;
}

/** The smallest difference between adjacent values of an ascending list, and where it starts. */
function smallestStep(values: number[]): { step: number; at: number } {
  let best = { step: Number.POSITIVE_INFINITY, at: 0 };
  for (let index = 1; index < values.length; index += 1) {
    const step = (values[index] as number) - (values[index - 1] as number);
    if (step < best.step) best = { step, at: index - 1 };
  }
  return best;
}

function clock(hour: number, minute: number, second: number): string {
  return [hour, minute, second].map((part) => String(part).padStart(2, '0')).join(':');
}

/**
 * Whether some two consecutive calendar days both match the day fields (day of month, month,
 * day of week, with `L`, `W`, `#`) of `pattern`, matched by croner at the time of day
 * `hour:minute:second` (one the pattern fires at). Walks one 28-year calendar cycle, evaluating
 * each distinct month layout (month, weekday of the 1st, leap February) once: at most 91 × 31
 * day matches, a few ms.
 */
function hasConsecutiveFireDays(pattern: CronPattern, hour: number, minute: number, second: number): boolean {
  const date = new CronDate(new Date(Date.UTC(CYCLE_FIRST_YEAR, 0, 1, hour, minute, second)), 0);
  const layouts = new Map<number, { first: boolean; last: boolean; pair: boolean }>();
  let previousLastFires = false;
  for (let month = 0; month <= CYCLE_YEARS * 12; month += 1) {
    const year = CYCLE_FIRST_YEAR + Math.floor(month / 12);
    const monthIndex = month % 12;
    const length = new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();
    const key = (monthIndex * 7 + new Date(Date.UTC(year, monthIndex, 1)).getUTCDay()) * 32 + length;
    let layout = layouts.get(key);
    if (!layout) {
      layout = { first: false, last: false, pair: false };
      if (pattern.month[monthIndex]) {
        let previous = false;
        for (let day = 1; day <= length; day += 1) {
          date.year = year;
          date.month = monthIndex;
          date.day = day;
          const fires = date.match(pattern, CRON_RULES);
          if (fires && previous) layout.pair = true;
          if (day === 1) layout.first = fires;
          if (day === length) layout.last = fires;
          previous = fires;
        }
      }
      layouts.set(key, layout);
    }
    if (layout.pair || (previousLastFires && layout.first)) return true;
    previousLastFires = layout.last;
  }
  return false;
}

/** The shortest gap between consecutive fires on ordinary days (no UTC offset change), with the fires' times of day. */
function shortestDailyGap(pattern: CronPattern, minIntervalMs: number): ShortCronGap | null {
  const seconds = indices(pattern.second);
  const minutes = indices(pattern.minute);
  const hours = indices(pattern.hour);
  const [s0, m0, h0] = [seconds[0] as number, minutes[0] as number, hours[0] as number];
  const [s1, m1, h1] = [seconds.at(-1) as number, minutes.at(-1) as number, hours.at(-1) as number];
  const candidates: ShortCronGap[] = [];
  // Fires of a day, in order, are hours × minutes × seconds; adjacent ones differ in the second
  // only, or go from a minute's last second to the next minute's first, or from an hour's last
  // minute and second to the next hour's first.
  const bySecond = smallestStep(seconds);
  if (seconds.length > 1) {
    const from = seconds[bySecond.at] as number;
    candidates.push({ gapMs: bySecond.step * 1000, where: `${clock(h0, m0, from)} and ${clock(h0, m0, from + bySecond.step)}` });
  }
  const byMinute = smallestStep(minutes);
  if (minutes.length > 1) {
    const from = minutes[byMinute.at] as number;
    candidates.push({
      gapMs: (byMinute.step * 60 - (s1 - s0)) * 1000,
      where: `${clock(h0, from, s1)} and ${clock(h0, from + byMinute.step, s0)}`,
    });
  }
  const byHour = smallestStep(hours);
  if (hours.length > 1) {
    const from = hours[byHour.at] as number;
    candidates.push({
      gapMs: (byHour.step * 3600 - (m1 * 60 + s1 - (m0 * 60 + s0))) * 1000,
      where: `${clock(from, m1, s1)} and ${clock(from + byHour.step, m0, s0)}`,
    });
  }
  // Last fire of a day to the first of the next: only when two consecutive days fire. Fire days
  // further apart are at least 1 day + 1 s apart, more than the largest minimum interval.
  const acrossMidnightMs = (DAY_S - (h1 * 3600 + m1 * 60 + s1) + (h0 * 3600 + m0 * 60 + s0)) * 1000;
  if (acrossMidnightMs < minIntervalMs && hasConsecutiveFireDays(pattern, h0, m0, s0)) {
    candidates.push({ gapMs: acrossMidnightMs, where: `${clock(h1, m1, s1)} and ${clock(h0, m0, s0)} the next day` });
  }
  const shortest = candidates.reduce<ShortCronGap | null>((best, gap) => (best && best.gapMs <= gap.gapMs ? best : gap), null);
  return shortest && shortest.gapMs < minIntervalMs ? shortest : null;
}

function describeGap(from: number, to: number): ShortCronGap {
  return { gapMs: to - from, where: `${new Date(from).toISOString()} and ${new Date(to).toISOString()}, when the UTC offset changes` };
}

/**
 * The first gap below `minIntervalMs` among fires of a fixed-time pattern around a UTC offset
 * change, walked with the zone's croner job: it runs a fixed time skipped by spring-forward at
 * the first valid time after the gap and a repeated local time once, cheaply (it does not step
 * through the skipped or repeated local times).
 */
function fixedTimeGapAround(cron: Cron, change: OffsetChange, minIntervalMs: number): ShortCronGap | null {
  // A gap below the minimum that ordinary days do not have spans the change, so it starts
  // within minIntervalMs before it and ends within minIntervalMs after it (a moved fire runs at
  // the change itself).
  let cursor = change.at - minIntervalMs - 1000;
  let previous: number | null = null;
  for (let walked = 0; walked < TRANSITION_MAX_FIRES; walked += 1) {
    const next = cron.nextRun(new Date(cursor))?.getTime();
    if (next === undefined) return null;
    if (previous !== null && next - previous < minIntervalMs) return describeGap(previous, next);
    if (next > change.at + minIntervalMs) return null;
    previous = next;
    cursor = next;
  }
  return null;
}

/**
 * The gap across a UTC offset change of a pattern with a wildcard or step in its time fields.
 * Such a pattern runs at the local times that exist, skipping those of a spring-forward gap and
 * running in both copies of repeated ones, so its fires before the change are those of the
 * pattern at the old fixed offset and after it those at the new one. Croner evaluates both
 * without the zone (stepping through a skipped hour in the zone costs one Intl call per
 * candidate second: ~20 ms for a fire every 2 s).
 */
function intervalGapAround(expression: string, change: OffsetChange, minIntervalMs: number): ShortCronGap | null {
  const atOffset = (name: string) => new Cron(expression, { paused: true, utcOffset: offsetMinutes(name), ...CRON_RULES });
  const before = atOffset(change.before).previousRuns(1, new Date(change.at))[0]?.getTime();
  const after = atOffset(change.after)
    .nextRun(new Date(change.at - 1000))
    ?.getTime();
  if (before === undefined || after === undefined || before < change.at - minIntervalMs) return null;
  return after - before < minIntervalMs ? describeGap(before, after) : null;
}

/**
 * Finds a gap between two consecutive fires of a cron expression that is shorter than
 * `minIntervalMs`, over all time rather than a sample of upcoming fires:
 * - on ordinary days every fire day fires at the same times of day, hours × minutes × seconds,
 *   so the shortest gap is the smallest between adjacent times of day (from the three fields,
 *   without listing them) or, when two consecutive calendar days can both fire (checked with
 *   croner over a 28-year calendar cycle), from the last time of day to the first;
 * - around each change of the zone's UTC offset in the 2 years from `now` (found with Intl),
 *   the fires just before and after the change are compared: walked with the zone's croner job
 *   for a fixed-time pattern (a time skipped by spring-forward runs at the first valid time after
 *   it, a repeated one once), and at the old and new fixed offsets for a pattern with a wildcard
 *   or step (it skips missing local times and runs repeated ones twice).
 * Cost: well under 10 ms even for hostile patterns (measured: about 1–4 ms in a zone with DST,
 * under 1 ms in UTC).
 * @param options.expression a cron expression or macro that croner accepted (as `cron`).
 * @param options.timezone the IANA zone `cron` runs in.
 * @param options.cron the croner job for `expression` in `timezone` (5 or 6 fields, DST rule
 *   `no-wildcard`, day-of-month OR day-of-week).
 * @param options.minIntervalMs shortest allowed gap, in ms; nothing is checked at or below 1 s
 *   (fires are whole seconds apart).
 * @param options.now ms since epoch; offset changes from then on are checked.
 * @returns the shortest gap of an ordinary day when below the minimum, else the first one below
 *   it around an offset change, else `null`.
 * @throws TypeError when croner cannot parse `expression` (callers parse it first).
 */
export function findShortCronGap(options: {
  expression: string;
  timezone: string;
  cron: Cron;
  minIntervalMs: number;
  now: number;
}): ShortCronGap | null {
  const { expression, timezone, cron, minIntervalMs, now } = options;
  if (minIntervalMs <= 1000) return null;
  const pattern = new CronPattern(expression, timezone, CRON_RULES);
  const daily = shortestDailyGap(pattern, minIntervalMs);
  if (daily) return daily;
  if (timezone === 'UTC') return null;
  for (const change of offsetChanges(timezone, now, now + TRANSITION_HORIZON_MS)) {
    const gap = pattern.isFixedTime
      ? fixedTimeGapAround(cron, change, minIntervalMs)
      : intervalGapAround(expression, change, minIntervalMs);
    if (gap) return gap;
  }
  return null;
}
