/**
 * Milliseconds of an event-loop iteration after which the kernel starts no
 * more route handlers in that iteration (#11). Each handler's synchronous
 * start (e.g. parsing a cron expression, ~1 ms) is small, but eight of them
 * read in one poll of the sockets used to run back to back, holding every
 * other request (`/health` included) for their sum.
 */
export const HANDLER_TURN_BUDGET_MS = 4;

/** Lets route handlers start while the current event-loop iteration is short. */
export interface HandlerAdmission {
  /**
   * `undefined` when the handler may start now; otherwise a promise that
   * resolves on a later iteration, in arrival order. Never rejects.
   */
  enter(): Promise<void> | undefined;
}

/**
 * Admission of route handlers by a per-iteration time budget: the first
 * `enter()` of an iteration starts its clock; handlers start at once while
 * less than `budgetMs` has passed since then and nobody is waiting, and wait
 * otherwise. Waiting handlers start in later iterations (first come, first
 * served), each iteration admitting them one at a time for as long as its
 * own budget lasts; one handler at least per iteration, so the queue always
 * drains. Under light load nothing ever waits (one `performance.now()` and
 * at most one `setImmediate` per iteration).
 * @param options.budgetMs the budget per iteration in ms; 0 admits everything at once.
 * @param options.now clock in ms (default `performance.now`).
 */
export function createHandlerAdmission(options: { budgetMs: number; now?: () => number }): HandlerAdmission {
  const now = options.now ?? (() => performance.now());
  const waiting: Array<() => void> = [];
  let turnStarted = 0;
  let inTurn = false;

  const withinBudget = () => now() - turnStarted < options.budgetMs;

  /** Starts this iteration's clock once; the `setImmediate` (check phase) marks its end. */
  const startTurn = () => {
    if (inTurn) return;
    inTurn = true;
    turnStarted = now();
    setImmediate(endTurn);
  };

  /** Starts the next waiting handler, then (after its synchronous start, one microtask later) the next while the budget lasts. */
  const admitNext = () => {
    const next = waiting.shift();
    if (next === undefined) return;
    next();
    queueMicrotask(() => {
      if (withinBudget()) admitNext();
    });
  };

  function endTurn() {
    inTurn = false;
    if (waiting.length === 0) return;
    startTurn();
    admitNext();
  }

  return {
    enter() {
      if (options.budgetMs <= 0) return undefined;
      startTurn();
      if (waiting.length === 0 && withinBudget()) return undefined;
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}
