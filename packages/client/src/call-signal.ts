import { AgentInfraError } from './errors.js';
import { timerDelayMs } from './timeout-ms.js';

/** The signal one request runs under: the caller's signal plus a timer. */
export interface CallSignal {
  /** Aborts with an AgentInfraError reason: `aborted` (the caller's signal) or `timeout` (the timer). */
  signal: AbortSignal;
  /** Starts the timer again from now (for inactivity timeouts). */
  restart(): void;
  /** Stops the timer until the next `restart`. */
  stop(): void;
  /** Stops the timer for good (a later `restart` does nothing) and stops following the caller's signal. */
  dispose(): void;
  /**
   * The typed error for a failure `error` of `what` (e.g. `Request to agent-memory/mem/query`): the signal's reason when it
   * fired, `error` itself when it is an AgentInfraError, else `network_error` with `error` as `cause`.
   */
  failure(error: unknown, what: string): AgentInfraError;
}

/** The error of a call the caller aborted; `cause` is the signal's reason. */
export function abortedError(reason: unknown): AgentInfraError {
  return new AgentInfraError({ status: 0, code: 'aborted', message: 'The call was aborted.', cause: reason });
}

/**
 * A signal that aborts when `caller` does, or `timeoutMs` after it was made or last restarted (0 or Infinity: never).
 * @throws AgentInfraError status 0 `invalid_request` when `timeoutMs` is negative or NaN.
 */
export function callSignal(caller: AbortSignal | undefined, timeoutMs: number): CallSignal {
  const delay = timerDelayMs(timeoutMs);
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let disposed = false;
  const onAbort = () => controller.abort(abortedError(caller?.reason));
  const expire = () =>
    controller.abort(new AgentInfraError({ status: 0, code: 'timeout', message: `Timed out after ${delay} ms (timeoutMs).` }));
  const stop = () => clearTimeout(timer);
  const restart = () => {
    stop();
    if (delay !== undefined && !disposed && !controller.signal.aborted) timer = setTimeout(expire, delay);
  };
  if (caller?.aborted) onAbort();
  else caller?.addEventListener('abort', onAbort, { once: true });
  restart();
  return {
    signal: controller.signal,
    restart,
    stop,
    dispose() {
      disposed = true;
      stop();
      caller?.removeEventListener('abort', onAbort);
    },
    failure(error, what) {
      if (controller.signal.aborted) return controller.signal.reason as AgentInfraError;
      if (error instanceof AgentInfraError) return error;
      return new AgentInfraError({ status: 0, code: 'network_error', message: `${what} failed: ${String(error)}`, cause: error });
    },
  };
}

/**
 * `promise`, or a rejection with `signal`'s reason as soon as it aborts
 * (`promise` is then left to settle unwatched: a stalled stream's read may
 * never settle).
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
