import { InputError } from '@agentinfra/core';
import type { SchedulerDeps } from './service-deps.js';

/**
 * Checks a job's `callback_url` against the delivery's SSRF rules (scheme,
 * URL syntax, private addresses, DNS resolution).
 * @throws InputError (400) with the delivery's reason, naming `callback_url` in `details.fields`.
 */
export async function checkCallbackUrl(delivery: SchedulerDeps['delivery'], url: string): Promise<void> {
  try {
    await delivery.checkTarget(url);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    throw new InputError(error.message, { fields: [{ path: 'callback_url', message: error.message }] });
  }
}
