/** Outcome of one signed HTTP delivery attempt. */
export interface DeliveryResult {
  /** HTTP status of the receiver's answer. */
  status: number;
  /** Whether the status is 2xx. */
  ok: boolean;
  /** Milliseconds from sending to the receiver's status (the body is not waited for). */
  ms: number;
}

/**
 * Signed HTTP deliveries to agent-supplied URLs (postbox webhooks, scheduler
 * callbacks), per CONTRACT.md "Signed deliveries": Standard Webhooks
 * headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) plus the
 * spec's `x-service-webhook-timestamp` / `x-service-webhook-signature`, body
 * `{ type, timestamp, data }`, HTTPS only, and no loopback, private,
 * link-local or metadata targets (checked after DNS resolution) unless the
 * operator allows them.
 */
export interface HttpDelivery {
  /**
   * Checks that `url` is an allowed target.
   * @throws InputError naming the reason (scheme, private address, unresolvable host).
   */
  checkTarget(url: string): Promise<void>;
  /**
   * POSTs one signed delivery. Every secret in `secrets` signs it (the
   * signature header lists them space-separated, for rotation windows).
   * Redirects are not followed (a 3xx is a non-2xx result).
   * @returns the receiver's status, as soon as it comes (the body is discarded, not waited for); a non-2xx
   *   answer is a result, not an error.
   * @throws InputError when the target is refused (scheme, or an address that is not public,
   *   checked on the address actually connected to); Error for network errors, timeouts and
   *   aborts (the caller retries). Messages name the target's origin only, never its path or query.
   */
  send(options: {
    url: string;
    secrets: readonly string[];
    /** Unique per message and stable across retries (`webhook-id`). */
    messageId: string;
    type: string;
    data: unknown;
    timeoutMs?: number;
    signal?: AbortSignal;
  }): Promise<DeliveryResult>;
}
