import { readdirSync, readFileSync } from 'node:fs';

/**
 * The nice value of every thread of this process, keyed by Linux thread id
 * (field 19 of `/proc/self/task/<tid>/stat`). Threads that end while being
 * read are left out; empty where `/proc` does not exist.
 */
export function threadNiceValues(): Map<number, number> {
  const values = new Map<number, number>();
  let threads: string[];
  try {
    threads = readdirSync('/proc/self/task');
  } catch {
    return values;
  }
  for (const thread of threads) {
    try {
      // The fields after the parenthesised command name start at field 3, so field 19 is the 17th of them.
      const fields = readFileSync(`/proc/self/task/${thread}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      values.set(Number(thread), Number(fields[16]));
    } catch {}
  }
  return values;
}

/** The ids of this process's threads that run at nice `nice` and are not in `before` (see {@link threadNiceValues}). */
export function threadsNicedSince(before: Map<number, number>, nice: number): number[] {
  return [...threadNiceValues()].filter(([thread, value]) => value === nice && before.get(thread) !== nice).map(([thread]) => thread);
}
