/** Outcome of one {@link RateLimiter.consume} call. */
export interface RateDecision {
  /** Whether the request fits in the window and was counted. */
  allowed: boolean;
  /** Requests still allowed in the current window after this one. */
  remaining: number;
  /** When refused: milliseconds until one more request would be allowed. */
  retryAfterMs: number;
}

/**
 * Sliding-window rate limiter shared by every replica that uses the same
 * backing store (in-process memory, or Redis).
 */
export interface RateLimiter {
  /**
   * Counts `cost` units against `key` if the window `windowMs` still holds
   * fewer than `limit` units; refused attempts are not counted.
   */
  consume(options: { key: string; limit: number; windowMs: number; cost?: number }): Promise<RateDecision>;
  /** Units counted for `key` within the last `windowMs` (read-only). */
  peek(options: { key: string; windowMs: number }): Promise<number>;
  /**
   * Takes back `cost` units (default 1) counted for `key` within the last
   * `windowMs`, the most recently counted first: for a caller whose allowed
   * `consume` paid for work that then failed (a quota unit for a message
   * that was never stored). Takes back what is there when fewer are counted.
   * @returns the units taken back (0 to `cost`).
   */
  refund(options: { key: string; windowMs: number; cost?: number }): Promise<number>;
  close?(): Promise<void>;
}
