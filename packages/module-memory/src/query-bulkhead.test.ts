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
  it('runs light requests together and a heavy one alone, in arrival order for one agent', async () => {
    const bulkhead = createQueryBulkhead(128);
    const log: string[] = [];
    const a = heldWork(log, 'a');
    const b = heldWork(log, 'b');
    const heavy = heldWork(log, 'heavy');
    const c = heldWork(log, 'c');
    const runs = [
      bulkhead.run('x', 20, a.work),
      bulkhead.run('x', 20, b.work),
      bulkhead.run('x', 110, heavy.work),
      bulkhead.run('x', 20, c.work),
    ];
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

  it('lets agents take turns: a backlog of heavy queries delays another agent by one of them, not all', async () => {
    const bulkhead = createQueryBulkhead(128);
    const log: string[] = [];
    const flood = Array.from({ length: 6 }, (_, index) => heldWork(log, `flood${index}`));
    const runs = flood.map((item) => bulkhead.run('mallory', 110, item.work));
    const victim = heldWork(log, 'victim');
    const second = heldWork(log, 'victim2');
    runs.push(bulkhead.run('alice', 20, victim.work), bulkhead.run('alice', 20, second.work));
    await settle();
    expect(log).toEqual(['start flood0']);
    // Turns go by key: mallory's queue came first, then alice's; each serves one request and goes to the back.
    flood[0]?.finish();
    await settle();
    expect(log.slice(1)).toEqual(['end flood0', 'start flood1']);
    flood[1]?.finish();
    await settle();
    expect(log.slice(3)).toEqual(['end flood1', 'start victim']);
    victim.finish();
    await settle();
    expect(log.slice(5)).toEqual(['end victim', 'start flood2']);
    flood[2]?.finish();
    await settle();
    expect(log.slice(7)).toEqual(['end flood2', 'start victim2']);
    second.finish();
    for (const item of flood.slice(3)) {
      await settle();
      item.finish();
    }
    expect(await Promise.all(runs)).toEqual(['flood0', 'flood1', 'flood2', 'flood3', 'flood4', 'flood5', 'victim', 'victim2']);
  });

  it('frees the units of work that throws, and caps a weight above the capacity', async () => {
    const bulkhead = createQueryBulkhead(128);
    await expect(
      bulkhead.run('x', 500, async () => {
        throw new Error('search failed');
      }),
    ).rejects.toThrow('search failed');
    expect(await bulkhead.run('x', 128, async () => 'ran')).toBe('ran');
  });
});
