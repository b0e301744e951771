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

  it('waits for one poll of I/O before storing, so items read from other sockets meanwhile join the batch', async () => {
    const batches: number[][] = [];
    const commit = createGroupCommit(
      async (items: readonly number[]) => {
        batches.push([...items]);
        return items.map((item): ItemOutcome<number> => ({ ok: true, value: item }));
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const first = commit.submit(1);
    // An item submitted from an I/O callback one immediate later (as a request read in the next poll would be).
    const second = new Promise<number>((resolve) => setImmediate(() => resolve(commit.submit(2))));
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(batches).toEqual([[1, 2]]);
  });

  it('gathers items arriving while a batch is in flight into the next batch', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => undefined;
    const firstStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const commit = createGroupCommit(
      async (items: readonly number[]) => {
        batches.push([...items]);
        if (batches.length === 1) {
          started();
          await gate;
        }
        return items.map((item): ItemOutcome<number> => ({ ok: true, value: item }));
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const first = commit.submit(1);
    await firstStarted;
    const later = [2, 3, 4].map((item) => commit.submit(item));
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await Promise.all([first, ...later]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });
});
