import type { CronOptions } from 'croner';

/**
 * How the scheduler reads cron expressions with croner, wherever it parses
 * or evaluates one: 5 fields, or 6 with seconds first; day-of-month and
 * day-of-week combine with OR (Vixie cron); in a DST gap a fixed-time job
 * runs at the first valid time after it, and once when a local time repeats.
 */
export const CRON_RULES = { mode: '5-or-6-parts', fixedTimeRule: 'no-wildcard', domAndDow: false } as const satisfies CronOptions;
