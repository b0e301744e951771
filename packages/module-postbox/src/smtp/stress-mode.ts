/**
 * Postfix's stress-adaptive behaviour for the bundled MTA: when most
 * connection slots are taken, idle clients are given far less time, so that
 * senders who connect and say nothing (or one command a minute) cannot keep
 * every slot while mail waits. Postfix uses `smtpd_timeout = ${stress?10}:{300}s`;
 * here the listener enters stress at {@link STRESS_ENTER_FRACTION} of
 * `maxClients` and leaves it below {@link STRESS_LEAVE_FRACTION} (the gap
 * keeps it from flapping on every connection).
 */
/** Share of `maxClients` connected at which the listener enters stress (rounded up: 6 of 8, 1 of 1). */
export const STRESS_ENTER_FRACTION = 0.75;
/** Share of `maxClients` that must still be connected to stay in stress: fewer, and it leaves (below 4 of 8, 2 of 3, 1 of 1). */
export const STRESS_LEAVE_FRACTION = 0.5;

/** Options of {@link createStressMode}. */
export interface StressModeOptions {
  maxClients: number;
  /** Idle timeout in ms outside stress (`smtp.socketTimeoutMs`). */
  idleTimeoutMs: number;
  /** Idle timeout in ms under stress (`smtp.stressSocketTimeoutMs`); the lower of the two applies. */
  stressIdleTimeoutMs: number;
  /** Sets the idle timeout of every open connection and of those to come, in ms. */
  applyIdleTimeout(timeoutMs: number): void;
  /** Called once when stress begins or ends, for a log line. */
  changed(stressed: boolean, open: number): void;
}

/** Whether the listener is under stress, from the number of open sessions. */
export interface StressMode {
  /** Reports the number of open sessions after one opened or closed. */
  update(open: number): void;
  readonly stressed: boolean;
}

/** Stress state of one listener, outside stress at first. */
export function createStressMode(options: StressModeOptions): StressMode {
  const enterAt = Math.ceil(options.maxClients * STRESS_ENTER_FRACTION);
  const leaveBelow = options.maxClients * STRESS_LEAVE_FRACTION;
  const stressTimeout = Math.min(options.idleTimeoutMs, options.stressIdleTimeoutMs);
  let stressed = false;
  return {
    update(open) {
      const next = stressed ? open >= leaveBelow : open >= enterAt;
      if (next === stressed) return;
      stressed = next;
      options.applyIdleTimeout(stressed ? stressTimeout : options.idleTimeoutMs);
      options.changed(stressed, open);
    },
    get stressed() {
      return stressed;
    },
  };
}
