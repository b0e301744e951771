/** One address of a name, as `dns.lookup` gives it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to its addresses, first the preferred one (as `dns.lookup` with `all` does); rejects when it does not resolve. */
export type NameLookup = (host: string) => Promise<ResolvedAddress[]>;

/**
 * At most this many lookups of one resolver run at once. The system's
 * resolver (`dns.lookup`, `getaddrinfo`) runs on libuv's thread pool, four
 * threads unless `UV_THREADPOOL_SIZE` says otherwise, and a call cannot be
 * cancelled: names that hang would otherwise hold every thread, and the
 * file writes that share the pool would wait for them. Three leave one.
 */
export const MAX_LOOKUPS_IN_FLIGHT = 3;
/**
 * Of {@link MAX_LOOKUPS_IN_FLIGHT}, how many may be late: lookups running
 * past their timeout, and lookups of names that were late before. A name
 * that was late before waits while this many are; other names still get
 * the remaining slots.
 */
export const MAX_LATE_LOOKUPS_IN_FLIGHT = 1;

/** What a lookup came to: the addresses, or why there are none. */
export type LookupOutcome = ResolvedAddress[] | { reason: string };

/** At most this many names and owners are remembered as late; the oldest are forgotten first. */
const MAX_REMEMBERED_LATE = 4_096;

/**
 * Runs one resolver's lookups at most {@link MAX_LOOKUPS_IN_FLIGHT} at a
 * time, one per name (a name asked for again while it waits or runs shares
 * that lookup), and starts a lookup whose name or owner was late before
 * only while fewer than {@link MAX_LATE_LOOKUPS_IN_FLIGHT} lookups are late.
 * Owners are whoever chose the name (a peer): one whose name hung once is
 * late from then on, whatever name it gives next, until a lookup of its
 * answers in time. So a peer whose names hang, by accident or on purpose,
 * holds at most that many slots after its first hang, and the other names
 * keep resolving beside it.
 */
export interface LookupGate {
  /**
   * Looks `host` up once a slot is free.
   * @param timeoutMs how long to wait in all (queue and lookup); a lookup
   *   still queued when every caller's timeout has passed is withdrawn and
   *   never runs; one still running is late from then on, and so are `host`
   *   and `owners` the next time.
   * @param owners who chose the name (e.g. the peers whose endpoint it is).
   * @returns the addresses (never empty), or `{ reason }`: the resolver's
   *   error code (`ENOTFOUND`, `EAI_AGAIN`), `ENODATA` when it answered no
   *   address, or `timeout`.
   */
  lookup(host: string, timeoutMs: number, owners?: readonly string[]): Promise<LookupOutcome>;
}

/** A lookup waiting for a slot or running. */
interface Entry {
  /** Whether the name or an owner was late before, when this lookup was asked for. */
  wasLate: boolean;
  started: boolean;
  /** Counted in the late lookups in flight (started as {@link wasLate}, or ran past a caller's timeout). */
  late: boolean;
  /** Callers still waiting for it. */
  waiters: number;
  outcome: Promise<LookupOutcome>;
  run: () => void;
}

/** A {@link LookupGate} over `resolve`. */
export function createLookupGate(resolve: NameLookup): LookupGate {
  /** Names (`name:…`) and owners (`owner:…`) that were late, oldest first. */
  const late = new Set<string>();
  const queue: Entry[] = [];
  const entries = new Map<string, Entry>();
  let running = 0;
  let runningLate = 0;

  const keysOf = (host: string, owners: readonly string[]) => [`name:${host}`, ...owners.map((owner) => `owner:${owner}`)];
  const remember = (keys: readonly string[]) => {
    for (const key of keys) {
      late.delete(key);
      late.add(key);
    }
    for (const oldest of late) {
      if (late.size <= MAX_REMEMBERED_LATE) break;
      late.delete(oldest);
    }
  };

  const markLate = (entry: Entry) => {
    if (entry.late) return;
    entry.late = true;
    runningLate += 1;
  };

  const pump = () => {
    for (let index = 0; index < queue.length && running < MAX_LOOKUPS_IN_FLIGHT; ) {
      const entry = queue[index] as Entry;
      if (entry.wasLate && runningLate >= MAX_LATE_LOOKUPS_IN_FLIGHT) {
        index += 1;
        continue;
      }
      queue.splice(index, 1);
      entry.run();
    }
  };

  const enqueue = (host: string, keys: readonly string[]): Entry => {
    let finish!: (outcome: LookupOutcome) => void;
    const entry: Entry = {
      wasLate: keys.some((key) => late.has(key)),
      started: false,
      late: false,
      waiters: 0,
      outcome: new Promise((done) => {
        finish = done;
      }),
      run: () => {
        entry.started = true;
        running += 1;
        if (entry.wasLate) markLate(entry);
        const settle = (outcome: LookupOutcome) => {
          running -= 1;
          if (entry.late) runningLate -= 1;
          entries.delete(host);
          finish(outcome);
          pump();
        };
        // A resolver that throws instead of rejecting still settles the entry.
        Promise.resolve()
          .then(() => resolve(host))
          .then(
            (addresses) => settle(addresses.length > 0 ? addresses : { reason: 'ENODATA' }),
            (error: unknown) => settle({ reason: String((error as { code?: unknown } | null)?.code ?? 'unresolvable') }),
          );
      },
    };
    entries.set(host, entry);
    queue.push(entry);
    pump();
    return entry;
  };

  return {
    async lookup(host, timeoutMs, owners = []) {
      const keys = keysOf(host, owners);
      const entry = entries.get(host) ?? enqueue(host, keys);
      entry.waiters += 1;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<LookupOutcome>((done) => {
        timer = setTimeout(() => {
          if (entry.started) {
            markLate(entry);
            remember(keys);
          } else if (entry.waiters === 1 && entries.get(host) === entry) {
            queue.splice(queue.indexOf(entry), 1);
            entries.delete(host);
          }
          done({ reason: 'timeout' });
        }, timeoutMs);
        timer.unref();
      });
      try {
        const outcome = await Promise.race([entry.outcome, timeout]);
        // An answer that won the race came within the timeout.
        if (!('reason' in outcome) || outcome.reason !== 'timeout') for (const key of keys) late.delete(key);
        return outcome;
      } finally {
        entry.waiters -= 1;
        clearTimeout(timer);
      }
    },
  };
}
