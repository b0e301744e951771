import { describe, expect, it } from 'vitest';
import { createLookupGate, MAX_LOOKUPS_IN_FLIGHT, type NameLookup, type ResolvedAddress } from './lookup-gate.js';

/** A resolver whose names starting with `hang` answer only when released; it records what it was asked and how many ran at once. */
function fakeResolver() {
  const asked: string[] = [];
  const hanging = new Map<string, () => void>();
  let running = 0;
  let most = 0;
  const resolve: NameLookup = async (host) => {
    asked.push(host);
    running += 1;
    most = Math.max(most, running);
    try {
      if (host.startsWith('hang')) await new Promise<void>((done) => hanging.set(host, done));
      if (host.startsWith('missing')) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      if (host.startsWith('empty')) return [];
      return [{ address: '192.0.2.7', family: 4 }] satisfies ResolvedAddress[];
    } finally {
      running -= 1;
    }
  };
  const releaseAll = () => {
    for (const [host, done] of hanging) {
      hanging.delete(host);
      done();
    }
  };
  return { resolve, asked, releaseAll, most: () => most };
}

describe('LookupGate: a bounded number of lookups in flight, so hanging names cannot take the thread pool', () => {
  it('runs at most MAX_LOOKUPS_IN_FLIGHT at once and withdraws the queued ones that time out', async () => {
    const fake = fakeResolver();
    const gate = createLookupGate(fake.resolve);
    const names = ['hang-1', 'hang-2', 'hang-3', 'hang-4', 'hang-5', 'hang-6'];
    const outcomes = await Promise.all(names.map((name) => gate.lookup(name, 100)));
    expect(outcomes).toEqual(names.map(() => ({ reason: 'timeout' })));
    expect(MAX_LOOKUPS_IN_FLIGHT).toBeLessThan(4);
    expect(fake.most()).toBe(MAX_LOOKUPS_IN_FLIGHT);
    fake.releaseAll();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The three that were still queued at their timeout never reached the resolver.
    expect(fake.asked).toEqual(['hang-1', 'hang-2', 'hang-3']);
  });

  it('lets names that hung before run only one at a time, so the other names keep resolving beside them', async () => {
    const fake = fakeResolver();
    const gate = createLookupGate(fake.resolve);
    await Promise.all([gate.lookup('hang-a', 30), gate.lookup('hang-b', 30)]);
    // Both still hang and hold two slots: a good name takes the third.
    expect(await gate.lookup('good.example', 100)).toEqual([{ address: '192.0.2.7', family: 4 }]);
    fake.releaseAll();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Next pass: hang-a and hang-b hang again, but only one of them may run; two good names still resolve.
    const pass = Promise.all([
      gate.lookup('hang-a', 100),
      gate.lookup('hang-b', 100),
      gate.lookup('good.example', 100),
      gate.lookup('other.example', 100),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.asked.slice(3)).toEqual(['hang-a', 'good.example', 'other.example']);
    const [a, b, good, other] = await pass;
    expect([a, b]).toEqual([{ reason: 'timeout' }, { reason: 'timeout' }]);
    expect([good, other]).toEqual([[{ address: '192.0.2.7', family: 4 }], [{ address: '192.0.2.7', family: 4 }]]);
    // hang-b waited behind hang-a and was withdrawn at its timeout, never asked.
    expect(fake.asked.filter((host) => host === 'hang-b')).toHaveLength(1);
    fake.releaseAll();
  });

  it('shares one lookup between callers of the same name and reports why a name has no address', async () => {
    const fake = fakeResolver();
    const gate = createLookupGate(fake.resolve);
    const [first, second] = await Promise.all([gate.lookup('good.example', 100), gate.lookup('good.example', 100)]);
    expect(first).toEqual(second);
    expect(fake.asked).toEqual(['good.example']);
    expect(await gate.lookup('missing.example', 100)).toEqual({ reason: 'ENOTFOUND' });
    expect(await gate.lookup('empty.example', 100)).toEqual({ reason: 'ENODATA' });
  });

  it('keeps a peer whose name hung in the late lane when it switches to a new name that hangs too', async () => {
    const fake = fakeResolver();
    const gate = createLookupGate(fake.resolve);
    await gate.lookup('hang-1.mallory', 30, ['mallory']);
    // mallory registers a fresh name each pass; another peer's name that hung once waits behind neither.
    const pass = Promise.all([
      gate.lookup('hang-2.mallory', 100, ['mallory']),
      gate.lookup('hang-3.mallory', 100, ['mallory']),
      gate.lookup('good.example', 100, ['bob']),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // hang-1 still runs late: mallory's new names wait for the late lane, bob's resolves in a normal slot.
    expect(fake.asked).toEqual(['hang-1.mallory', 'good.example']);
    const [two, three, good] = await pass;
    expect([two, three]).toEqual([{ reason: 'timeout' }, { reason: 'timeout' }]);
    expect(good).toEqual([{ address: '192.0.2.7', family: 4 }]);
    fake.releaseAll();
  });

  it('settles a lookup whose resolver throws instead of rejecting, and frees its slot', async () => {
    let calls = 0;
    const gate = createLookupGate((host) => {
      calls += 1;
      if (host === 'boom') throw new TypeError('not a name');
      return Promise.resolve([{ address: '192.0.2.8', family: 4 }]);
    });
    for (let attempt = 0; attempt < 5; attempt += 1) expect(await gate.lookup('boom', 100)).toEqual({ reason: 'unresolvable' });
    expect(await gate.lookup('fine.example', 100)).toEqual([{ address: '192.0.2.8', family: 4 }]);
    expect(calls).toBe(6);
  });

  it('withdraws a queued lookup only when no caller is still waiting for it', async () => {
    const fake = fakeResolver();
    const gate = createLookupGate(fake.resolve);
    const blockers = ['hang-1', 'hang-2', 'hang-3'].map((name) => gate.lookup(name, 40));
    const early = gate.lookup('good.example', 30);
    const patient = gate.lookup('good.example', 200);
    expect(await early).toEqual({ reason: 'timeout' });
    await Promise.all(blockers);
    fake.releaseAll();
    expect(await patient).toEqual([{ address: '192.0.2.7', family: 4 }]);
  });
});
