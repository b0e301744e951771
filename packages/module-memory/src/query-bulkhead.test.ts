import { describe, expect, it } from 'vitest';
import { createQueryBulkhead } from './query-bulkhead.js';

/** A unit of work that runs until `finish()` is called. */
function heldWork(log: string[], name: string) {
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    finish: () => finish(),
    work: async () => {
      log.push(`start ${name}`);
      await finished;
      log.push(`end ${name}`);
      return name;
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('createQueryBulkhead', () => {
  it('runs light requests together and a heavy one alone, in arrival order', async () => {
    const bulkhead = createQueryBulkhead(128);
    const log: string[] = [];
    const a = heldWork(log, 'a');
    const b = heldWork(log, 'b');
    const heavy = heldWork(log, 'heavy');
    const c = heldWork(log, 'c');
    const runs = [bulkhead.run(20, a.work), bulkhead.run(20, b.work), bulkhead.run(110, heavy.work), bulkhead.run(20, c.work)];
    await settle();
    // c fits beside a and b, but the heavy request came first: c waits behind it.
    expect(log).toEqual(['start a', 'start b']);
    a.finish();
    await settle();
    expect(log).toEqual(['start a', 'start b', 'end a']);
    b.finish();
    await settle();
    expect(log.slice(3)).toEqual(['end b', 'start heavy']);
    heavy.finish();
    await settle();
    expect(log.slice(5)).toEqual(['end heavy', 'start c']);
    c.finish();
    expect(await Promise.all(runs)).toEqual(['a', 'b', 'heavy', 'c']);
  });

  it('frees the units of work that throws, and caps a weight above the capacity', async () => {
    const bulkhead = createQueryBulkhead(128);
    await expect(
      bulkhead.run(500, async () => {
        throw new Error('search failed');
      }),
    ).rejects.toThrow('search failed');
    expect(await bulkhead.run(128, async () => 'ran')).toBe('ran');
  });
});
