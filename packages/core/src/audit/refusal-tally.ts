import type { Logger } from 'pino';
import { addressGroup } from '../kernel/client-address.js';
import type { Clock } from '../ports/clock.js';
import type { AuditLog } from './audit-log.js';

/** Why an authentication was refused: no credential, an unknown/expired/revoked one, or the address is over the failed-authentication limit. */
export type RefusalReason = 'missing' | 'unknown' | 'limited';

/** Distinct client addresses (IPv6 clients' /64 networks) tallied per window; the rest are counted under `*`. */
const MAX_CLIENTS = 1_000;

/**
 * Refused authentications in aggregate: instead of one audit row per
 * refusal (a credential-guessing flood would bury everything else), each
 * window ends with one `auth.refused` row per client address, with the
 * counts by reason and the window in `detail`. An IPv6 client counts as its
 * /64 network (`addressGroup`), as the failed-authentication limit counts
 * it: one network's many addresses would fill the tally otherwise.
 */
export interface RefusalTally {
  /** Counts one refusal. */
  count(client: string, reason: RefusalReason): void;
  /** Writes the rows of the current window now (the timer and {@link RefusalTally.close} call it). */
  flush(): Promise<void>;
  /** Stops the timer and flushes. */
  close(): Promise<void>;
}

/**
 * Starts a tally that flushes every `windowMs` (timer unref'd).
 * Write failures are logged, never thrown.
 */
export function createRefusalTally(options: { audit: AuditLog; clock: Clock; logger: Logger; windowMs: number }): RefusalTally {
  const { audit, clock, logger } = options;
  let counts = new Map<string, Record<RefusalReason, number>>();
  let windowStart = clock.now();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const flush = async () => {
    if (counts.size === 0) {
      windowStart = clock.now();
      return;
    }
    const tallied = counts;
    const start = windowStart;
    counts = new Map();
    windowStart = clock.now();
    await Promise.all(
      [...tallied].map(([client, byReason]) => {
        const total = byReason.missing + byReason.unknown + byReason.limited;
        return audit
          .record({
            action: 'auth.refused',
            outcome: 'denied',
            actor: null,
            client: client === '*' ? null : client,
            detail: {
              count: total,
              ...byReason,
              window_start: new Date(start).toISOString(),
              window_end: new Date(windowStart).toISOString(),
            },
          })
          .catch((error: unknown) => logger.error({ err: error }, 'audit: could not record refused authentications'));
      }),
    );
  };

  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => {
      void flush().finally(schedule);
    }, options.windowMs);
    timer.unref();
  };
  schedule();

  return {
    count(client, reason) {
      const group = addressGroup(client);
      const key = counts.has(group) || counts.size < MAX_CLIENTS ? group : '*';
      let entry = counts.get(key);
      if (!entry) {
        entry = { missing: 0, unknown: 0, limited: 0 };
        counts.set(key, entry);
      }
      entry[reason] += 1;
    },
    flush,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await flush();
    },
  };
}
