import { describe, expect, it } from 'vitest';
import { createGroupCommit, type ItemOutcome } from './group-commit.js';

describe('group commit', () => {
  it('stores items submitted together in one batch and answers each after it', async () => {
    const batches: number[][] = [];
    const commit = createGroupCommit(
      async (items: readonly number[]) => {
        batches.push([...items]);
        return items.map((item): ItemOutcome<number> => ({ ok: true, value: item * 10 }));
      },
      { maxBatch: 3, maxInFlight: 1 },
    );
    const results = await Promise.all([1, 2, 3, 4, 5].map((item) => commit.submit(item)));
    expect(results).toEqual([10, 20, 30, 40, 50]);
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('fails only the item whose outcome is an error', async () => {
    const commit = createGroupCommit(
      async (items: readonly number[]) =>
        items.map((item): ItemOutcome<number> => (item === 2 ? { ok: false, error: new Error('two') } : { ok: true, value: item })),
      { maxBatch: 10, maxInFlight: 1 },
    );
    const results = await Promise.allSettled([1, 2, 3].map((item) => commit.submit(item)));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('stores the items of a failed batch one by one, so one bad item does not fail the others', async () => {
    const batches: number[][] = [];
    const commit = createGroupCommit(
      async (items: readonly number[]) => {
        batches.push([...items]);
        if (items.includes(2)) throw new Error('duplicate');
        return items.map((item): ItemOutcome<number> => ({ ok: true, value: item }));
      },
      { maxBatch: 10, maxInFlight: 2 },
    );
    const results = await Promise.allSettled([1, 2, 3].map((item) => commit.submit(item)));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(batches).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('gathers items arriving while a batch is in flight into the next batch', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const commit = createGroupCommit(
      async (items: readonly number[]) => {
        batches.push([...items]);
        if (batches.length === 1) await gate;
        return items.map((item): ItemOutcome<number> => ({ ok: true, value: item }));
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const first = commit.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3, 4].map((item) => commit.submit(item));
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await Promise.all([first, ...later]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });
});
