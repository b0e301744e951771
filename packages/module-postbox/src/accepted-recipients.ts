/**
 * A short positive memory of the addresses RCPT TO accepted, so that a busy
 * sender's every message does not cost a lookup. Only "this address exists"
 * is remembered, for `ttlMs`: a new address is never refused because of it,
 * and an address removed within the window is still checked again when the
 * message is stored (the ingest reads the owner in its own transaction batch
 * and skips a recipient nobody owns any more), so no mail lands in a mailbox
 * that no longer exists.
 */
export interface AcceptedRecipients {
  /** Whether `address` (lower-case) is accepted: from memory when it was accepted within `ttlMs`, else `lookup`. */
  accepts(address: string): Promise<boolean>;
}

/**
 * @param lookup the authoritative check (a SQL query).
 * @param options.ttlMs how long a positive answer is reused, in milliseconds.
 * @param options.maxEntries entries kept at most (the memory is cleared when it is full).
 * @param options.now clock in ms since epoch.
 */
export function createAcceptedRecipients(
  lookup: (address: string) => Promise<boolean>,
  options: { ttlMs: number; maxEntries: number; now: () => number },
): AcceptedRecipients {
  const acceptedUntil = new Map<string, number>();
  return {
    async accepts(address) {
      const now = options.now();
      const until = acceptedUntil.get(address);
      if (until !== undefined && until > now) return true;
      const accepted = await lookup(address);
      if (accepted) {
        if (acceptedUntil.size >= options.maxEntries) acceptedUntil.clear();
        acceptedUntil.set(address, now + options.ttlMs);
      } else {
        acceptedUntil.delete(address);
      }
      return accepted;
    },
  };
}
