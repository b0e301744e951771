import type { RefusalTally } from '../audit/refusal-tally.js';
import type { FailedAuthLimit } from '../auth/failed-auth-limit.js';
import { RateLimitError } from '../errors.js';
import type { CoreMetrics } from './core-metrics.js';

/**
 * The failed-authentication limit, also counting every refused
 * authentication by reason into `agentinfra_auth_failures_total` and the
 * audit log's tally of refusals (`missing` or `unknown` credential, or
 * `limited` when the address is over the limit).
 */
export function observedFailedAuth(
  limit: FailedAuthLimit,
  observers: { tally: RefusalTally; metrics: CoreMetrics | null },
): FailedAuthLimit {
  const count = (client: string, reason: 'missing' | 'unknown' | 'limited') => {
    observers.tally.count(client, reason);
    observers.metrics?.authFailures.inc({ reason });
  };
  return {
    async check(client) {
      try {
        await limit.check(client);
      } catch (error) {
        if (error instanceof RateLimitError) count(client, 'limited');
        throw error;
      }
    },
    async fail(client, reason) {
      count(client, reason);
      await limit.fail(client, reason);
    },
  };
}
