/**
 * Limits on what one SMTP client may ask for, so that one sender can neither
 * keep the recipient lookups (a query each) busy nor harvest which addresses
 * exist, nor take every connection slot:
 * - at most {@link MAX_RECIPIENTS} recipients per message (RFC 5321
 *   §4.5.3.1.8 asks for at least 100; more get 452 4.5.3, and the client
 *   sends the rest in another transaction);
 * - after {@link MAX_REFUSED_RECIPIENTS} refused recipients in one session
 *   the server answers 421 and closes it (as Postfix's hard error limit does;
 *   across sessions, refused recipients per client address are limited by
 *   `refused-recipients.ts`);
 * - at most {@link MAX_SESSIONS_PER_ADDRESS} sessions at a time from one
 *   client address (Postfix's default connection count limit), an IPv6
 *   client's being its /64 network (`addressGroup` of core); more get 421.
 */
export const MAX_RECIPIENTS = 100;
export const MAX_REFUSED_RECIPIENTS = 20;
export const MAX_SESSIONS_PER_ADDRESS = 50;

/** Per-session and per-address counts of an SMTP listener. */
export interface SessionLimits {
  /** A session opened from `address`; `false` when that address already has {@link MAX_SESSIONS_PER_ADDRESS}. */
  open(sessionId: string, address: string): boolean;
  /** Counts one refused recipient of the session; `true` once it has reached {@link MAX_REFUSED_RECIPIENTS}. */
  refused(sessionId: string): boolean;
  /** Forgets a closed session. */
  close(sessionId: string): void;
  /** Sessions open now (those `open` admitted and `close` has not forgotten). */
  readonly size: number;
}

/** Fresh counts for one listener. */
export function createSessionLimits(): SessionLimits {
  const perAddress = new Map<string, number>();
  const sessions = new Map<string, { address: string; refused: number }>();
  return {
    open(sessionId, address) {
      const open = perAddress.get(address) ?? 0;
      if (open >= MAX_SESSIONS_PER_ADDRESS) return false;
      perAddress.set(address, open + 1);
      sessions.set(sessionId, { address, refused: 0 });
      return true;
    },
    refused(sessionId) {
      const session = sessions.get(sessionId);
      if (!session) return false;
      session.refused += 1;
      return session.refused >= MAX_REFUSED_RECIPIENTS;
    },
    close(sessionId) {
      const session = sessions.get(sessionId);
      if (!session) return;
      sessions.delete(sessionId);
      const left = (perAddress.get(session.address) ?? 1) - 1;
      if (left > 0) perAddress.set(session.address, left);
      else perAddress.delete(session.address);
    },
    get size() {
      return sessions.size;
    },
  };
}
