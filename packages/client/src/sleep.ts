import { abortedError } from './call-signal.js';

/**
 * Waits `ms` milliseconds.
 * @throws AgentInfraError status 0 `aborted` as soon as `signal` aborts, at once when it already has.
 */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortedError(signal.reason));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', cancel);
      resolve();
    }
    function cancel() {
      clearTimeout(timer);
      reject(abortedError(signal?.reason));
    }
    signal?.addEventListener('abort', cancel, { once: true });
  });
}
