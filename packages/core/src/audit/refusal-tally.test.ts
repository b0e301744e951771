import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../ports/clock.js';
import type { AuditEventInput } from './audit-event.js';
import type { AuditLog } from './audit-log.js';
import { createRefusalTally } from './refusal-tally.js';

describe('createRefusalTally', () => {
  it('tallies an IPv6 client by its /64, so one network picking new addresses cannot crowd out the other clients', async () => {
    const recorded: AuditEventInput[] = [];
    const audit = { record: async (event: AuditEventInput) => void recorded.push(event) } as unknown as AuditLog;
    const tally = createRefusalTally({ audit, clock: systemClock, logger: pino({ level: 'silent' }), windowMs: 60_000 });
    for (let host = 1; host <= 1_200; host++) tally.count(`2001:db8:5:5::${host.toString(16)}`, 'unknown');
    tally.count('203.0.113.7', 'missing');
    await tally.close();
    expect(recorded.map((event) => [event.client, (event.detail as { count: number }).count])).toEqual([
      ['2001:db8:5:5::/64', 1_200],
      ['203.0.113.7', 1],
    ]);
  });
});
