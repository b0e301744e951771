/** Runs tasks one at a time per key (in this process), in the order they were submitted. */
export interface SerialByKey {
  /**
   * Runs `task` once every task submitted earlier with the same `key` has
   * settled; tasks of other keys run meanwhile.
   * @returns what `task` resolves; rejects as `task` does.
   */
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
}

/** A {@link SerialByKey} that keeps an entry only while its key has tasks running or waiting. */
export function createSerialByKey(): SerialByKey {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run(key, task) {
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(() => task());
      const tail = result.catch(() => undefined);
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
  };
}
