import { InputError } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import { type Cadence, nextFire, parseCadence, sameCadence } from './cadence.js';

const NOW = Date.parse('2026-03-01T00:00:00.000Z');
const parse = (cadence: string, timezone?: string, minIntervalMs = 10_000) => parseCadence({ cadence, timezone, minIntervalMs, now: NOW });

/** The next `count` fires after `from`, as ISO strings. */
function fires(cadence: Cadence, from: string, count: number, anchor = Date.parse(from)): string[] {
  const result: string[] = [];
  let after = Date.parse(from);
  for (let index = 0; index < count; index += 1) {
    const next = nextFire(cadence, { after, anchor }) as number;
    result.push(new Date(next).toISOString());
    after = next;
  }
  return result;
}

describe('parseCadence: accepted cadences and their next fires', () => {
  const cases: Array<[cadence: string, timezone: string | undefined, from: string, expected: string[]]> = [
    [
      '*/15 * * * *',
      undefined,
      '2026-03-01T10:07:00.000Z',
      ['2026-03-01T10:15:00.000Z', '2026-03-01T10:30:00.000Z', '2026-03-01T10:45:00.000Z'],
    ],
    ['0 9 * * MON-FRI', undefined, '2026-03-06T12:00:00.000Z', ['2026-03-09T09:00:00.000Z', '2026-03-10T09:00:00.000Z']],
    ['30 */10 * * * *', undefined, '2026-03-01T00:00:00.000Z', ['2026-03-01T00:00:30.000Z', '2026-03-01T00:10:30.000Z']],
    ['0 0 1,15 * *', undefined, '2026-03-02T00:00:00.000Z', ['2026-03-15T00:00:00.000Z', '2026-04-01T00:00:00.000Z']],
    [
      '0 0 13 * 5',
      undefined,
      '2026-03-01T00:00:00.000Z',
      ['2026-03-06T00:00:00.000Z', '2026-03-13T00:00:00.000Z', '2026-03-20T00:00:00.000Z'],
    ],
    ['@hourly', undefined, '2026-03-01T10:20:00.000Z', ['2026-03-01T11:00:00.000Z', '2026-03-01T12:00:00.000Z']],
    ['@daily', undefined, '2026-03-01T10:20:00.000Z', ['2026-03-02T00:00:00.000Z']],
    ['@midnight', 'Asia/Tokyo', '2026-03-01T10:20:00.000Z', ['2026-03-01T15:00:00.000Z']],
    ['@weekly', undefined, '2026-03-04T00:00:00.000Z', ['2026-03-08T00:00:00.000Z']],
    ['@monthly', undefined, '2026-03-04T00:00:00.000Z', ['2026-04-01T00:00:00.000Z']],
    ['@yearly', undefined, '2026-03-04T00:00:00.000Z', ['2027-01-01T00:00:00.000Z']],
    ['@ANNUALLY', undefined, '2026-03-04T00:00:00.000Z', ['2027-01-01T00:00:00.000Z']],
    ['0 9 * * *', 'Europe/Paris', '2026-03-01T00:00:00.000Z', ['2026-03-01T08:00:00.000Z']],
    ['CRON_TZ=America/New_York 0 9 * * *', undefined, '2026-03-01T00:00:00.000Z', ['2026-03-01T14:00:00.000Z']],
    ['TZ=Asia/Kolkata 0 9 * * *', 'Asia/Kolkata', '2026-03-01T00:00:00.000Z', ['2026-03-01T03:30:00.000Z']],
    ['  0   12  *  *  *  ', undefined, '2026-03-01T00:00:00.000Z', ['2026-03-01T12:00:00.000Z']],
  ];
  it.each(cases)('%s (tz %s) after %s', (cadence, timezone, from, expected) => {
    expect(fires(parse(cadence, timezone), from, expected.length)).toEqual(expected);
  });

  it.each([
    ['@every 90s', 90_000],
    ['@every 10s', 10_000],
    ['@every 5m', 300_000],
    ['@every 2h', 7_200_000],
    ['@every 1d', 86_400_000],
    ['@every 1h30m', 5_400_000],
    ['@EVERY 1M', 60_000],
  ])('%s is every %i ms, counted from the anchor', (cadence, intervalMs) => {
    const parsed = parse(cadence);
    expect(parsed).toEqual({ kind: 'every', intervalMs });
    const anchor = Date.parse('2026-03-01T00:00:00.250Z');
    expect(nextFire(parsed, { after: anchor, anchor })).toBe(anchor + intervalMs);
    expect(nextFire(parsed, { after: anchor + intervalMs, anchor })).toBe(anchor + 2 * intervalMs);
    expect(nextFire(parsed, { after: anchor + 10 * intervalMs - 1, anchor })).toBe(anchor + 10 * intervalMs);
    expect(nextFire(parsed, { after: anchor - 5, anchor })).toBe(anchor);
  });

  it('normalises time zone names and cron macros, so equal cadences compare equal', () => {
    expect(parse('0 9 * * *', 'europe/paris')).toEqual({ kind: 'cron', expression: '0 9 * * *', timezone: 'Europe/Paris' });
    expect(parse('0 9 * * *')).toEqual({ kind: 'cron', expression: '0 9 * * *', timezone: 'UTC' });
    expect(sameCadence(parse('CRON_TZ=Europe/Paris 0 9 * * *'), parse('0 9 * * *', 'Europe/Paris'))).toBe(true);
    expect(sameCadence(parse('0 9 * * *'), parse('0 9 * * *', 'Europe/Paris'))).toBe(false);
    expect(sameCadence(parse('@every 60s'), parse('@every 1m'))).toBe(true);
    expect(sameCadence(parse('@every 60s'), parse('* * * * *'))).toBe(false);
  });
});

describe('parseCadence across DST transitions in a named time zone (America/New_York, Vixie cron rules)', () => {
  // 2026-03-08: 02:00 EST jumps to 03:00 EDT. 2026-11-01: 02:00 EDT falls back to 01:00 EST.
  it('a fixed time inside the spring-forward gap runs once, at the first valid time after the gap', () => {
    expect(fires(parse('30 2 * * *', 'America/New_York'), '2026-03-07T00:00:00.000Z', 3)).toEqual([
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:00:00.000Z', // 03:00 EDT: 02:30 does not exist that day
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  // Review: croner moves a fire out of a gap within one local day, but skipped it when the gap spans midnight.
  it('a fixed time in a spring-forward gap that spans midnight runs at the first valid time after it (America/Nuuk)', () => {
    // 2026-03-28 23:00 -02 jumps to 2026-03-29 00:00 -01 (01:00Z).
    expect(fires(parse('30 23 * * *', 'America/Nuuk'), '2026-03-27T12:00:00.000Z', 3)).toEqual([
      '2026-03-28T01:30:00.000Z', // Friday 23:30 -02
      '2026-03-29T01:00:00.000Z', // Saturday's 23:30 does not exist: 00:00 -01
      '2026-03-30T00:30:00.000Z', // Sunday 23:30 -01
    ]);
    expect(fires(parse('0 23 * * 6', 'America/Nuuk'), '2026-03-27T12:00:00.000Z', 2)).toEqual([
      '2026-03-29T01:00:00.000Z',
      '2026-04-05T00:00:00.000Z',
    ]);
    expect(fires(parse('30 23 28 3 *', 'America/Nuuk'), '2026-03-01T00:00:00.000Z', 2)).toEqual([
      '2026-03-29T01:00:00.000Z',
      '2027-03-29T00:30:00.000Z',
    ]);
  });

  it('a fixed time in the repeated fall-back hour runs once, not twice', () => {
    expect(fires(parse('30 1 * * *', 'America/New_York'), '2026-10-31T00:00:00.000Z', 3)).toEqual([
      '2026-10-31T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T05:30:00.000Z', // first 01:30 (EDT) only
      '2026-11-02T06:30:00.000Z', // 01:30 EST
    ]);
  });

  it('an interval pattern skips the missing hour and runs in both repeated hours', () => {
    expect(fires(parse('0 * * * *', 'America/New_York'), '2026-03-08T06:30:00.000Z', 3)).toEqual([
      '2026-03-08T07:00:00.000Z', // 03:00 EDT follows 01:00 EST directly
      '2026-03-08T08:00:00.000Z',
      '2026-03-08T09:00:00.000Z',
    ]);
    expect(fires(parse('*/30 1 * * *', 'America/New_York'), '2026-11-01T04:00:00.000Z', 4)).toEqual([
      '2026-11-01T05:00:00.000Z', // 01:00 EDT
      '2026-11-01T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T06:00:00.000Z', // 01:00 EST
      '2026-11-01T06:30:00.000Z', // 01:30 EST
    ]);
  });

  it('@daily follows local midnight across the change (23 h and 25 h days)', () => {
    expect(fires(parse('@daily', 'Europe/Berlin'), '2026-03-28T12:00:00.000Z', 2)).toEqual([
      '2026-03-28T23:00:00.000Z',
      '2026-03-29T22:00:00.000Z',
    ]);
  });

  it('@every ignores DST: it counts real time', () => {
    const every = parse('CRON_TZ=America/New_York @every 1h');
    expect(fires(every, '2026-03-08T06:00:00.000Z', 2)).toEqual(['2026-03-08T07:00:00.000Z', '2026-03-08T08:00:00.000Z']);
  });
});

describe('parseCadence: refused cadences (400 with the reason)', () => {
  const refused: Array<[cadence: string, timezone: string | undefined, reason: RegExp]> = [
    ['', undefined, /the cadence is empty/],
    ['* * * *', undefined, /5 fields .* or 6 with seconds first; "\* \* \* \*" has 4/],
    ['0 0 * * * * 2026', undefined, /has 7/],
    ['61 * * * *', undefined, /^Invalid cadence: the minute field "61" is not valid: use 0–59,/],
    ['L * * * *', undefined, /^Invalid cadence: the minute field "L" is not valid: use 0–59,/],
    ['0 25 * * *', undefined, /the hour field "25" is not valid: use 0–23,/],
    ['0 0 0 * *', undefined, /the day-of-month field "0" is not valid: use 1–31,/],
    ['0 0 32 * *', undefined, /the day-of-month field "32" is not valid/],
    ['0 0 * 13 *', undefined, /the month field "13" is not valid: use 1–12 or JAN–DEC/],
    ['0 0 * * 8', undefined, /the day-of-week field "8" is not valid: use 0–7/],
    ['0 0 * * FOO', undefined, /the day-of-week field "FOO" is not valid/],
    ['60 0 0 * * *', undefined, /the second field "60" is not valid: use 0–59/],
    ['0 */0 0 * * *', undefined, /the minute field "\*\/0" is not valid/],
    ['a b c d e', undefined, /the minute field "a" is not valid/],
    ['cron_tz=Europe/Paris 0 9 * * *', undefined, /prefix must be upper case: "CRON_TZ=<zone> " or "TZ=<zone> ", not "cron_tz="/],
    ['Tz=Europe/Paris 0 9 * * *', undefined, /prefix must be upper case.*not "Tz="/],
    ['0 0 30 2 *', undefined, /never fires/],
    ['* * * * * *', undefined, /fires 1 s apart; the minimum interval is 10 s/],
    ['*/5 * * * * *', undefined, /fires 5 s apart/],
    ['0,5 * * * * *', undefined, /fires 5 s apart/],
    ['@reboot', undefined, /unknown macro "@reboot"/],
    ['@fortnightly', undefined, /unknown macro/],
    ['@every', undefined, /is not <n><unit>/],
    ['@every 5', undefined, /is not <n><unit>/],
    ['@every 5w', undefined, /is not <n><unit>/],
    ['@every -5m', undefined, /is not <n><unit>/],
    ['@every 1.5h', undefined, /is not <n><unit>/],
    ['@every 9s', undefined, /shorter than the minimum interval of 10 s/],
    ['@every 0s', undefined, /shorter than the minimum interval/],
    ['@every 367d', undefined, /longer than 366 days/],
    ['0 9 * * *', 'Mars/Olympus_Mons', /Unknown time zone "Mars\/Olympus_Mons"/],
    ['CRON_TZ=Nowhere/City 0 9 * * *', undefined, /Unknown time zone "Nowhere\/City"/],
    ['CRON_TZ=Europe/Paris 0 9 * * *', 'Asia/Tokyo', /conflicts with timezone "Asia\/Tokyo"/],
  ];
  it.each(refused)('"%s" (tz %s) → %s', (cadence, timezone, reason) => {
    let thrown: unknown;
    try {
      parse(cadence, timezone);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as InputError).message).toMatch(reason);
  });

  it.each([
    ['CRON_TZ=Nowhere/City 0 9 * * *', undefined, 'cadence'],
    ['0 9 * * *', 'Nowhere/City', 'timezone'],
    ['0 0 0 * *', undefined, 'cadence'],
  ])('"%s" (tz %s) names the field %s in details', (cadence, timezone, path) => {
    expect(() => parse(cadence, timezone)).toThrow(
      expect.objectContaining({ details: { fields: [expect.objectContaining({ path })] } }) as unknown as Error,
    );
  });

  it('the minimum interval is configurable', () => {
    expect(parse('@every 2s', undefined, 1_000)).toEqual({ kind: 'every', intervalMs: 2_000 });
    expect(parse('*/2 * * * * *', undefined, 1_000)).toMatchObject({ kind: 'cron' });
    expect(() => parse('* * * * *', undefined, 300_000)).toThrow(/fires 60 s apart; the minimum interval is 300 s/);
  });
});

describe('parseCadence: the minimum interval holds over all time, not only the next occurrences', () => {
  /** Submission times at different times of day and of the year (2028 is a leap year). */
  const submittedAt = [
    '2026-03-01T00:00:00.000Z',
    '2026-03-01T12:00:00.000Z',
    '2026-06-15T23:59:58.000Z',
    '2026-07-31T06:30:00.000Z',
    '2027-12-31T18:00:00.000Z',
    '2028-02-28T23:00:00.000Z',
  ];
  const parseAt = (cadence: string, now: string, timezone?: string, minIntervalMs = 10_000) =>
    parseCadence({ cadence, timezone, minIntervalMs, now: Date.parse(now) });

  const refused: Array<[cadence: string, timezone: string | undefined, reason: RegExp]> = [
    // 23:59:59 then 00:00:00 the next day, every night
    ['0,30,59 0,30,59 0,12,23 * * *', undefined, /fires 1 s apart( \(23:59:59 and 00:00:00 the next day\))?; the minimum interval is 10 s/],
    // the same across each month boundary (last day, then the 1st)
    ['0,30,59 0,30,59 0,12,23 1,L * *', undefined, /fires 1 s apart( \(23:59:59 and 00:00:00 the next day\))?; the minimum/],
    ['59,0 59,0 23,0 * * *', undefined, /fires 1 s apart/],
    // 28 February then 29 February, in leap years only
    ['0,59 0,59 0,23 28,29 2 *', undefined, /fires 1 s apart/],
    // 29 February then 1 March, in leap years only
    ['0,59 0,59 0,23 1,29 2,3 *', undefined, /fires 1 s apart/],
    // 28 February then 1 March, in other years only
    ['0,59 0,59 0,23 1,28 2,3 *', undefined, /fires 1 s apart/],
    // day of month OR day of week: the 13th, or any Friday (Friday 12th, then Saturday 13th)
    ['59,0 59,0 23,0 13 * 5', undefined, /fires 1 s apart/],
    // a month's last Friday on its last day, then the next month's first Saturday
    ['59,0 59,0 23,0 * * 5L,6#1', undefined, /fires 1 s apart/],
    ['59,0 59,0 23,0 * * SAT,SUN', undefined, /fires 1 s apart/],
    // America/New_York springs forward at 02:00: 02:00:05 and 02:30:05 run at 03:00:00, 5 s before 03:00:05
    ['5 0,30 2,3 * * *', 'America/New_York', /fires 5 s apart \(.*when the UTC offset changes\); the minimum interval is 10 s/],
    // 01:59:59 EST then 03:00:00 EDT on the spring-forward day
    ['59,0 59,0 1,3 * * *', 'America/New_York', /fires 1 s apart/],
    // a stepped hour runs in both copies of the repeated hour: 01:59:59 EDT, then 01:00:00 EST
    ['0,59 0,59 1-2/5 * * *', 'America/New_York', /fires 1 s apart \(.*when the UTC offset changes\)/],
  ];
  it.each(refused.flatMap(([cadence, timezone, reason]) => submittedAt.map((now) => [cadence, timezone, now, reason] as const)))(
    '"%s" (tz %s) submitted at %s is refused: %s',
    (cadence, timezone, now, reason) => {
      expect(() => parseAt(cadence, now, timezone)).toThrow(InputError);
      expect(() => parseAt(cadence, now, timezone)).toThrow(reason);
    },
  );

  const accepted: Array<[cadence: string, timezone: string | undefined, minIntervalMs: number]> = [
    ['*/10 * * * * *', undefined, 10_000],
    ['*/10 * * * * *', 'America/New_York', 10_000],
    ['*/2 * * * * *', 'Europe/Berlin', 2_000],
    ['0 0 * * *', undefined, 10_000],
    ['0 0 * * *', 'America/New_York', 10_000],
    ['59 23 * * *', undefined, 10_000],
    ['59 23 * * *', undefined, 86_340_000],
    ['59 59 23 28,29 2 *', undefined, 10_000],
    ['0 0 29 2 *', undefined, 10_000],
    ['30 2 * * *', 'America/New_York', 10_000],
    ['30 1 * * *', 'America/New_York', 10_000],
    // a fixed time in the repeated hour runs once: 01:59:59 EDT is not followed by 01:00:00 EST
    ['0,59 0,59 1 * * *', 'America/New_York', 10_000],
    // 23:59:59 and 00:00:00 on days that are never consecutive
    ['59,0 59,0 23,0 * * 1', undefined, 10_000],
    ['59,0 59,0 23,0 * * 1,3,5', 'America/New_York', 10_000],
    ['0,59 0,59 0,23 29 2 *', undefined, 10_000],
    ['59,0 59,0 23,0 1-29/2 4,6,9,11 *', undefined, 10_000],
    ['59,0 59,0 23,0 * * 5L,6#2', 'Australia/Lord_Howe', 10_000],
    ['@hourly', 'Europe/Berlin', 3_600_000],
    ['@daily', 'Asia/Kolkata', 86_400_000],
  ];
  it.each(accepted.flatMap(([cadence, timezone, min]) => submittedAt.map((now) => [cadence, timezone, min, now] as const)))(
    '"%s" (tz %s, minimum %i ms) submitted at %s is accepted',
    (cadence, timezone, minIntervalMs, now) => {
      expect(parseAt(cadence, now, timezone, minIntervalMs)).toMatchObject({ kind: 'cron' });
    },
  );
});
