import { randomBytes } from 'node:crypto';

/** One signed-in operator: the bridge key itself is never kept, only that it was shown. */
export interface ConsoleSession {
  id: string;
  /** Per-session token every console form posts back (CSRF). */
  csrf: string;
  /** When the operator signed in (ms since the epoch); the session ends `maxAgeMs` later however busy. */
  createdAt: number;
  lastSeen: number;
  /** A message shown once on the next page (e.g. a new device key). */
  flash?: { kind: 'ok' | 'error' | 'secret'; text: string; secret?: string };
}

/**
 * Sessions held in this process's memory. One ends after `idleMs` without a
 * request or `maxAgeMs` after sign-in, whichever comes first; at most
 * `maxSessions` live at once (a new sign-in past the cap ends the one idle longest).
 */
export interface SessionStore {
  create(): ConsoleSession;
  /** The live session with this id (touching it), or `null` when unknown or idle too long. */
  get(id: string | undefined): ConsoleSession | null;
  delete(id: string): void;
}

const token = () => randomBytes(32).toString('base64url');

/** Limits of {@link createSessionStore}: times in milliseconds; `now` is injectable for tests. */
export interface SessionStoreOptions {
  idleMs: number;
  /** Absolute lifetime from sign-in (default 12 hours). */
  maxAgeMs?: number;
  /** Live sessions kept at most (default 1,000). */
  maxSessions?: number;
  now?: () => number;
}

/** A {@link SessionStore} in memory; Map order is least recently used first. */
export function createSessionStore(options: SessionStoreOptions): SessionStore {
  const now = options.now ?? Date.now;
  const maxAgeMs = options.maxAgeMs ?? 12 * 60 * 60_000;
  const maxSessions = options.maxSessions ?? 1_000;
  const sessions = new Map<string, ConsoleSession>();
  const expired = (session: ConsoleSession, at: number) => session.lastSeen < at - options.idleMs || session.createdAt <= at - maxAgeMs;
  const sweep = (at: number) => {
    for (const [id, session] of sessions) if (expired(session, at)) sessions.delete(id);
  };
  return {
    create() {
      const at = now();
      sweep(at);
      for (const id of sessions.keys()) {
        if (sessions.size < maxSessions) break;
        sessions.delete(id);
      }
      const session: ConsoleSession = { id: token(), csrf: token(), createdAt: at, lastSeen: at };
      sessions.set(session.id, session);
      return session;
    },
    get(id) {
      if (!id) return null;
      const session = sessions.get(id);
      if (!session) return null;
      const at = now();
      sessions.delete(id);
      if (expired(session, at)) return null;
      session.lastSeen = at;
      sessions.set(id, session);
      return session;
    },
    delete(id) {
      sessions.delete(id);
    },
  };
}
