import { AgentInfraError } from './errors.js';

/** The longest delay `setTimeout` takes (2^31−1 ms, about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The timer delay of a `timeoutMs` option (ms): `undefined` (no limit) for
 * 0 or `Infinity`, else the value capped at 2^31−1 ms.
 * @throws AgentInfraError status 0 `invalid_request` for a negative number or NaN.
 */
export function timerDelayMs(timeoutMs: number): number | undefined {
  if (!(timeoutMs >= 0))
    throw new AgentInfraError({ status: 0, code: 'invalid_request', message: `timeoutMs must be 0 or more (ms), not ${timeoutMs}.` });
  if (timeoutMs === 0 || timeoutMs === Number.POSITIVE_INFINITY) return undefined;
  return Math.min(timeoutMs, MAX_TIMER_MS);
}
