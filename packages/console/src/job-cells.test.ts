import { describe, expect, it } from 'vitest';
import { cadenceZone } from './job-cells.js';

describe('the time zone shown after a job’s cadence', () => {
  it('is the job’s zone for a cron expression or macro', () => {
    expect(cadenceZone('0 9 * * 1-5', 'Europe/Amsterdam')).toBe('Europe/Amsterdam');
    expect(cadenceZone('@daily', 'UTC')).toBe('UTC');
  });

  it('is left out for @every, which ignores it, and when the cadence names its zone', () => {
    expect(cadenceZone('@every 10s', 'UTC')).toBeNull();
    expect(cadenceZone('@EVERY 1h30m', 'UTC')).toBeNull();
    expect(cadenceZone('CRON_TZ=Europe/Berlin 0 9 * * *', 'Europe/Berlin')).toBeNull();
    expect(cadenceZone('TZ=Europe/Berlin @every 1m', 'UTC')).toBeNull();
  });
});
