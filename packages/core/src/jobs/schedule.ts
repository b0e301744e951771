import { Cron } from 'croner';
import type { JobSchedule } from './job.js';

/**
 * The first occurrence of `schedule` strictly after `after` (ms since epoch).
 * `every` occurrences are aligned to multiples of the interval since the
 * epoch, so every replica computes the same instants. Cron expressions are
 * evaluated in UTC by croner.
 * @throws Error when the cron expression is invalid or has no future occurrence.
 */
export function nextOccurrence(schedule: JobSchedule, after: number): number {
  if ('every' in schedule) {
    if (!(schedule.every > 0)) throw new Error('schedule.every must be a positive number of milliseconds.');
    return (Math.floor(after / schedule.every) + 1) * schedule.every;
  }
  const next = new Cron(schedule.cron, { timezone: 'UTC', paused: true }).nextRun(new Date(after));
  if (!next) throw new Error(`Cron expression "${schedule.cron}" has no future occurrence.`);
  return next.getTime();
}
