import { InputError } from '@agentinfra/core';
import { Cron, CronPattern } from 'croner';
import { describeCronError } from './cron-field-error.js';
import { findShortCronGap } from './cron-gap.js';
import { CRON_RULES } from './cron-rules.js';
import { fireSwallowedBySpringForward } from './spring-forward.js';

/**
 * A parsed job cadence:
 * - `every`: a fixed interval in ms, counted from the job's anchor (the time
 *   its cadence was set), so every replica computes the same instants;
 * - `cron`: a 5-field (minute precision) or 6-field (seconds first) cron
 *   expression or macro, evaluated in an IANA time zone (UTC by default).
 */
export type Cadence = { kind: 'every'; intervalMs: number } | { kind: 'cron'; expression: string; timezone: string };

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);
/** Longest `@every` interval: 366 days. */
const MAX_EVERY_MS = 366 * UNIT_MS.d;
/** Upcoming occurrences whose gaps are checked first (the check over all time follows). */
const GAP_SAMPLE = 12;
/**
 * Parsed cron patterns, by time zone and expression (parsing costs ~0.1 ms; fires evaluate the same few patterns
 * often), with whether each is fixed-time (no wildcard or step in its second, minute and hour fields).
 */
const patterns = new Map<string, { cron: Cron; fixedTime: boolean }>();
const PATTERN_CACHE_LIMIT = 2_000;
/** How far past `after` a cron expression with no later fire is checked for a fire swallowed by a DST gap (2 years). */
const SPRING_FORWARD_HORIZON_MS = 731 * 86_400_000;

function invalid(reason: string): InputError {
  return new InputError(`Invalid cadence: ${reason}`, { fields: [{ path: 'cadence', message: reason }] });
}

/**
 * The canonical name of an IANA time zone (`europe/paris` → `Europe/Paris`, `utc` → `UTC`).
 * @param field the request field the zone came from (`cadence` for a `CRON_TZ=` prefix), named in the error.
 * @throws InputError when the zone is unknown.
 */
export function canonicalTimezone(zone: string, field: 'timezone' | 'cadence' = 'timezone'): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    throw new InputError(`Unknown time zone "${zone}": use an IANA name such as "Europe/Paris" or "UTC".`, {
      fields: [{ path: field, message: 'unknown IANA time zone' }],
    });
  }
}

function cronOf(expression: string, timezone: string): { cron: Cron; fixedTime: boolean } {
  const key = `${timezone} ${expression}`;
  let parsed = patterns.get(key);
  if (!parsed) {
    const cron = new Cron(expression, { paused: true, timezone, ...CRON_RULES });
    parsed = { cron, fixedTime: new CronPattern(expression, timezone, CRON_RULES).isFixedTime };
    if (patterns.size >= PATTERN_CACHE_LIMIT) patterns.clear();
    patterns.set(key, parsed);
  }
  return parsed;
}

function parseEvery(spec: string, minIntervalMs: number): Cadence {
  const match = /^((?:\d+[smhd])+)$/.exec(spec);
  if (!match) {
    throw invalid(`"@every ${spec}" is not <n><unit>: use whole numbers with units s, m, h or d, e.g. "@every 90s" or "@every 1h30m".`);
  }
  let intervalMs = 0;
  for (const part of spec.matchAll(/(\d+)([smhd])/g)) {
    intervalMs += Number(part[1]) * UNIT_MS[part[2] as keyof typeof UNIT_MS];
  }
  if (intervalMs < minIntervalMs) {
    throw invalid(`"@every ${spec}" is shorter than the minimum interval of ${minIntervalMs / 1000} s.`);
  }
  if (intervalMs > MAX_EVERY_MS) throw invalid(`"@every ${spec}" is longer than 366 days.`);
  return { kind: 'every', intervalMs };
}

function parseCron(expression: string, timezone: string, minIntervalMs: number, now: number): Cadence {
  if (expression.startsWith('@')) {
    if (!MACROS.has(expression.toLowerCase())) {
      throw invalid(
        `unknown macro "${expression}": use @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <n><unit>.`,
      );
    }
    expression = expression.toLowerCase();
  } else {
    const fields = expression.split(' ').length;
    if (fields !== 5 && fields !== 6) {
      throw invalid(
        `a cron expression has 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first; "${expression}" has ${fields}.`,
      );
    }
  }
  let cron: Cron;
  try {
    cron = cronOf(expression, timezone).cron;
  } catch {
    throw invalid(describeCronError(expression));
  }
  const upcoming = cron.nextRuns(GAP_SAMPLE, new Date(now)).map((date) => date.getTime());
  if (upcoming.length === 0) throw invalid(`"${expression}" never fires.`);
  for (let index = 1; index < upcoming.length; index += 1) {
    const gap = (upcoming[index] as number) - (upcoming[index - 1] as number);
    if (gap < minIntervalMs) {
      throw invalid(`"${expression}" fires ${gap / 1000} s apart; the minimum interval is ${minIntervalMs / 1000} s.`);
    }
  }
  const short = findShortCronGap({ expression, timezone, cron, minIntervalMs, now });
  if (short) {
    throw invalid(
      `"${expression}" fires ${short.gapMs / 1000} s apart (${short.where}); the minimum interval is ${minIntervalMs / 1000} s.`,
    );
  }
  return { kind: 'cron', expression, timezone };
}

/**
 * Parses a job cadence (SPEC.md Job `cadence`): a standard 5-field cron
 * expression, a 6-field one with seconds first, a macro (`@yearly`,
 * `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`), or
 * `@every <n><unit>[<n><unit>…]` with units s, m, h, d (`@every 90s`,
 * `@every 1h30m`). A `CRON_TZ=<zone> ` (or `TZ=<zone> `) prefix, or
 * `timezone`, sets the IANA time zone cron fields are read in (default UTC;
 * ignored by `@every`). Cron syntax and field ranges are croner's (names
 * `JAN`/`MON`, ranges, steps, lists, `L`, `W`, `#`, `?`).
 * @param options.minIntervalMs shortest allowed time between two fires, in ms: the `@every`
 *   interval, and for a cron expression the shortest gap between two consecutive fires over all
 *   time (the times of day it fires at, from one day to the next when two consecutive days can
 *   fire, and around the time zone's UTC offset changes in the next 2 years), not only among its
 *   next occurrences.
 * @param options.now ms since epoch from which a cron expression must still fire, and from which
 *   offset changes are checked.
 * @throws InputError (400) with the reason: bad syntax, field out of range, unknown time zone,
 *   conflicting zones, an interval below the minimum, or an expression that never fires.
 */
export function parseCadence(options: { cadence: string; timezone?: string; minIntervalMs: number; now: number }): Cadence {
  let text = options.cadence.trim().replace(/\s+/g, ' ');
  let zone: string | undefined;
  const prefix = /^(?:CRON_TZ|TZ)=(\S+) (.+)$/.exec(text);
  if (prefix) {
    zone = canonicalTimezone(prefix[1] as string, 'cadence');
    text = prefix[2] as string;
  } else {
    const misspelt = /^((?:cron_tz|tz)=)\S* /i.exec(text);
    if (misspelt) throw invalid(`the time zone prefix must be upper case: "CRON_TZ=<zone> " or "TZ=<zone> ", not "${misspelt[1]}".`);
  }
  if (options.timezone !== undefined) {
    const given = canonicalTimezone(options.timezone);
    if (zone !== undefined && zone !== given) {
      throw invalid(`CRON_TZ=${zone} in the cadence conflicts with timezone "${given}".`);
    }
    zone = given;
  }
  if (text === '') throw invalid('the cadence is empty.');
  const every = /^@every(?: (.*))?$/i.exec(text);
  if (every) return parseEvery((every[1] ?? '').replace(/ /g, '').toLowerCase(), options.minIntervalMs);
  return parseCron(text, zone ?? 'UTC', options.minIntervalMs, options.now);
}

/**
 * The first fire of `cadence` strictly after `after` (ms since epoch).
 * `every` instants are `anchor + k · interval`; cron instants come from croner
 * in the cadence's time zone, and a fixed-time fire that a spring-forward gap
 * swallowed runs at the first valid time after the gap (see
 * {@link fireSwallowedBySpringForward}).
 * @returns ms since epoch, or `null` when a cron expression has no later occurrence.
 */
export function nextFire(cadence: Cadence, options: { after: number; anchor: number }): number | null {
  if (cadence.kind === 'every') {
    const elapsed = options.after - options.anchor;
    const steps = elapsed < 0 ? 0 : Math.floor(elapsed / cadence.intervalMs) + 1;
    return options.anchor + steps * cadence.intervalMs;
  }
  const { cron, fixedTime } = cronOf(cadence.expression, cadence.timezone);
  const next = cron.nextRun(new Date(options.after))?.getTime() ?? null;
  if (!fixedTime || cadence.timezone === 'UTC') return next;
  const until = next ?? options.after + SPRING_FORWARD_HORIZON_MS;
  return fireSwallowedBySpringForward({ ...cadence, after: options.after, until }) ?? next;
}

/** Whether two cadences fire at the same instants (given the same anchor). */
export function sameCadence(a: Cadence, b: Cadence): boolean {
  if (a.kind === 'every') return b.kind === 'every' && a.intervalMs === b.intervalMs;
  return b.kind === 'cron' && a.expression === b.expression && a.timezone === b.timezone;
}
