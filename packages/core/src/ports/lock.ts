/** A held lock; release it when the critical section ends. */
export interface LockLease {
  /** Releases the lock if this lease still holds it. Idempotent. */
  release(): Promise<void>;
}

/**
 * Mutual exclusion across replicas (in-process memory, or Redis with a
 * random owner token and expiry so a crashed holder frees the lock).
 */
export interface Lock {
  /**
   * Takes `key` for at most `ttlMs` milliseconds.
   * @returns the lease, or `null` when another holder has it.
   */
  tryAcquire(options: { key: string; ttlMs: number }): Promise<LockLease | null>;
  close?(): Promise<void>;
}
