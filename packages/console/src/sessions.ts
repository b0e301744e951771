import { randomBytes } from 'node:crypto';

/** One signed-in operator: the bridge key itself is never kept, only that it was shown. */
export interface ConsoleSession {
  id: string;
  /** Per-session token every console form posts back (CSRF). */
  csrf: string;
  lastSeen: number;
  /** A message shown once on the next page (e.g. a new device key). */
  flash?: { kind: 'ok' | 'error' | 'secret'; text: string; secret?: string };
}

/** Sessions held in this process's memory, expiring after `idleMs` without a request. */
export interface SessionStore {
  create(): ConsoleSession;
  /** The live session with this id (touching it), or `null` when unknown or idle too long. */
  get(id: string | undefined): ConsoleSession | null;
  delete(id: string): void;
}

const token = () => randomBytes(32).toString('base64url');

/** A {@link SessionStore} in memory; `now` is injectable for tests. */
export function createSessionStore(options: { idleMs: number; now?: () => number }): SessionStore {
  const now = options.now ?? Date.now;
  const sessions = new Map<string, ConsoleSession>();
  const sweep = () => {
    const cutoff = now() - options.idleMs;
    for (const [id, session] of sessions) if (session.lastSeen < cutoff) sessions.delete(id);
  };
  return {
    create() {
      sweep();
      const session: ConsoleSession = { id: token(), csrf: token(), lastSeen: now() };
      sessions.set(session.id, session);
      return session;
    },
    get(id) {
      if (!id) return null;
      const session = sessions.get(id);
      if (!session) return null;
      if (session.lastSeen < now() - options.idleMs) {
        sessions.delete(id);
        return null;
      }
      session.lastSeen = now();
      return session;
    },
    delete(id) {
      sessions.delete(id);
    },
  };
}
