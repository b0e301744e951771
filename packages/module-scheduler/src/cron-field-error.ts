import { Cron } from 'croner';

/** A cron field as users name it, with what it accepts. */
interface CronField {
  name: string;
  allowed: string;
}

const SECOND: CronField = { name: 'second', allowed: '0–59' };
const FIVE_FIELDS: readonly CronField[] = [
  { name: 'minute', allowed: '0–59' },
  { name: 'hour', allowed: '0–23' },
  { name: 'day-of-month', allowed: '1–31, L (last day) or nW (nearest weekday)' },
  { name: 'month', allowed: '1–12 or JAN–DEC' },
  { name: 'day-of-week', allowed: '0–7 (0 and 7 are Sunday), SUN–SAT, nL (last) or n#k (k-th)' },
];

/**
 * Why croner refused `expression` (5 fields, or 6 with seconds first), in the
 * caller's terms: the first field that croner refuses on its own, named as
 * the caller counts fields (croner counts seconds first, and reports a
 * day-of-month of 0 as "-1"), with the value written and what the field
 * accepts. When no field is wrong on its own, a plain statement that the
 * expression is invalid.
 */
export function describeCronError(expression: string): string {
  const values = expression.split(' ');
  const fields = values.length === 6 ? [SECOND, ...FIVE_FIELDS] : FIVE_FIELDS;
  const offset = 6 - values.length;
  for (const [index, field] of fields.entries()) {
    const alone = ['0', '*', '*', '*', '*', '*'];
    alone[index + offset] = values[index] as string;
    try {
      new Cron(alone.join(' '), { paused: true, mode: '6-part', domAndDow: false });
    } catch {
      return `the ${field.name} field "${values[index]}" is not valid: use ${field.allowed}, with ranges (a-b), steps (*/n) and lists (a,b).`;
    }
  }
  return `"${expression}" is not a valid cron expression.`;
}
