import { nextIoTurn } from '../kernel/io-turn.js';

/**
 * Group commit (shared by modules that store many small writes, e.g.
 * semantic memories and inbound mail): items submitted while the event loop is busy are stored
 * together (one transaction, one multi-row insert), so concurrent ingests
 * share the per-transaction cost (BEGIN/COMMIT, the WAL fsync, the lookups)
 * instead of each paying it. A submitter's promise settles only after its
 * batch has committed, so an acknowledged item is as durable as a lone one.
 * When a whole batch fails, its items are stored again one by one, so one bad
 * item (a duplicate key, say) never fails the others.
 */
export interface GroupCommit<T, R> {
  /** Queues `item`; resolves with its result once its batch is stored, or rejects with its own error. */
  submit(item: T): Promise<R>;
}

/** The outcome of one item in a flushed batch: its result, or the error that item alone failed with. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * @param flush stores a batch (1..`maxBatch` items, in arrival order) and
 *   returns one outcome per item, in order; throwing fails the whole batch
 *   (its items are then flushed one at a time).
 * @param options.maxBatch largest batch; items beyond it wait for the next one.
 * @param options.maxInFlight batches being stored at once; items arriving meanwhile gather into the next batch.
 */
export function createGroupCommit<T, R>(
  flush: (items: readonly T[]) => Promise<ItemOutcome<R>[]>,
  options: { maxBatch: number; maxInFlight: number },
): GroupCommit<T, R> {
  type Pending = { item: T; resolve: (result: R) => void; reject: (error: unknown) => void };
  let queue: Pending[] = [];
  let scheduled = false;
  let inFlight = 0;

  const deliver = (pending: Pending, outcome: ItemOutcome<R> | undefined) => {
    if (outcome === undefined) pending.reject(new Error('group commit: flush returned no outcome for an item'));
    else if (outcome.ok) pending.resolve(outcome.value);
    else pending.reject(outcome.error);
  };

  async function settle(batch: readonly Pending[]): Promise<void> {
    let outcomes: ItemOutcome<R>[];
    try {
      outcomes = await flush(batch.map((pending) => pending.item));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      for (const pending of batch) await settle([pending]);
      return;
    }
    for (const [index, pending] of batch.entries()) deliver(pending, outcomes[index]);
  }

  function run(): void {
    scheduled = false;
    if (inFlight >= options.maxInFlight || queue.length === 0) return;
    const batch = queue.slice(0, options.maxBatch);
    queue = queue.slice(batch.length);
    inFlight += 1;
    void settle(batch).finally(() => {
      inFlight -= 1;
      schedule();
    });
    schedule();
  }

  function schedule(): void {
    if (scheduled || queue.length === 0 || inFlight >= options.maxInFlight) return;
    scheduled = true;
    // After the loop has polled for I/O once more: the requests already read from other sockets reach `submit` in
    // that poll and join this batch (a commit delay of one loop turn). With one `setImmediate`, batches held half as
    // many semantic writes, and a write cost 17 % more CPU (bench/RESULTS.md, memory-http).
    void nextIoTurn().then(run);
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}
