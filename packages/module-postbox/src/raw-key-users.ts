/**
 * Counts, per blob key of raw MIME, the SMTP deliveries of this process that
 * are storing it. The same bytes can arrive in two sessions at once (a sender
 * retrying with another recipient list); before one of them removes the
 * blob because no stored message refers to it (yet), it asks whether another
 * delivery still needs it, whose messages may not be committed yet.
 */
export interface RawKeyUsers {
  /** Counts one more delivery using `key`; the returned function ends that use (call it once). */
  enter(key: string): () => void;
  /** Whether a delivery other than the caller's (which has entered) is using `key`. */
  sharedWithOthers(key: string): boolean;
  /** Whether any delivery is using `key` (asked by a removal of raw MIME that uses none). */
  inUse(key: string): boolean;
}

/** An empty {@link RawKeyUsers}. */
export function createRawKeyUsers(): RawKeyUsers {
  const users = new Map<string, number>();
  return {
    enter(key) {
      users.set(key, (users.get(key) ?? 0) + 1);
      return () => {
        const count = (users.get(key) ?? 1) - 1;
        if (count === 0) users.delete(key);
        else users.set(key, count);
      };
    },
    sharedWithOthers: (key) => (users.get(key) ?? 0) > 1,
    inUse: (key) => users.has(key),
  };
}
