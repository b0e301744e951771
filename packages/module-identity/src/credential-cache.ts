import type { Principal } from '@agentinfra/core';

/** One verified credential: who it is, and until when (ms since the epoch) it may be answered from memory. */
interface Entry {
  principal: Principal;
  until: number;
}

/** Options of {@link createCredentialCache}. */
export interface CredentialCacheOptions {
  /** Longest time (ms) an entry is used; 0 turns the cache off. */
  ttlMs: number;
  /** Most entries kept; the oldest entry goes first when full. */
  maxEntries: number;
}

/**
 * Device keys and delegation tokens that verified recently, in this
 * process's memory, so that a request with a known credential needs no SQL
 * read. Keyed by the credential's SHA-256 (the form the database stores),
 * never by the credential itself; nothing here is logged.
 *
 * Correctness rules:
 * - an entry is used until `ttlMs` after it was read from the database, and
 *   never at or past the credential's own `expires_at`;
 * - {@link CredentialCache.forget} (called by this process's revocations)
 *   drops matching entries at once, and a lookup that read the database
 *   before a revocation and finishes after it stores nothing (the
 *   revocation counter below), so a revocation in this process takes effect
 *   for the very next request;
 * - a revocation made by another process (another replica on the same
 *   PostgreSQL) is seen here only when the entry ends: at most `ttlMs` later.
 */
export interface CredentialCache {
  /** The principal of the credential with SHA-256 `hash`, if cached and still usable at `now`. */
  get(hash: string, now: number): Principal | undefined;
  /** A token for {@link CredentialCache.put}: the number of revocations so far. */
  revision(): number;
  /**
   * Keeps `principal` for `hash` until `min(now + ttlMs, expiresAt)`, unless a
   * revocation happened since `revision` was taken (the read may predate it).
   */
  put(hash: string, principal: Principal, options: { now: number; expiresAt: number; revision: number }): void;
  /** Drops every entry whose principal matches `revoked` and counts a revocation. */
  forget(revoked: (principal: Principal) => boolean): void;
}

/** A {@link CredentialCache} in this process's memory. */
export function createCredentialCache(options: CredentialCacheOptions): CredentialCache {
  const entries = new Map<string, Entry>();
  let revocations = 0;
  return {
    get(hash, now) {
      const entry = entries.get(hash);
      if (entry === undefined) return undefined;
      if (now >= entry.until) {
        entries.delete(hash);
        return undefined;
      }
      return entry.principal;
    },
    revision: () => revocations,
    put(hash, principal, { now, expiresAt, revision }) {
      if (options.ttlMs === 0 || revision !== revocations) return;
      const until = Math.min(now + options.ttlMs, expiresAt);
      if (until <= now) return;
      entries.delete(hash);
      if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(hash, { principal: frozen(principal), until });
    },
    forget(revoked) {
      revocations += 1;
      for (const [hash, entry] of entries) if (revoked(entry.principal)) entries.delete(hash);
    },
  };
}

/** `principal` made read-only, with its permission list. */
function frozen(principal: Principal): Principal {
  if (principal.kind === 'delegation') Object.freeze(principal.permissions);
  return Object.freeze(principal);
}
