import { describe, expect, it } from 'vitest';
import { createStepRunner } from './step-runner.js';

/** A job of `count` steps that logs `name` at each step and returns `name`. */
function* job(name: string, count: number, log: string[]): Generator<undefined, string, undefined> {
  for (let i = 0; i < count; i += 1) {
    log.push(name);
    yield;
  }
  return name;
}

/** A clock that moves 1 ms each time it is read. */
function tickingClock(): () => number {
  let now = 0;
  return () => {
    now += 1;
    return now;
  };
}

describe('createStepRunner', () => {
  it('starts on a later turn of the event loop and returns what the job returns', async () => {
    const runner = createStepRunner({ sliceMs: 1_000 });
    const log: string[] = [];
    const done = runner.run(job('a', 3, log));
    expect(log).toEqual([]);
    await expect(done).resolves.toBe('a');
    expect(log).toEqual(['a', 'a', 'a']);
  });

  // #11: a long job lets timers and I/O run between slices, and jobs share the slices.
  it('gives other callbacks a turn between slices and advances jobs round-robin', async () => {
    const runner = createStepRunner({ sliceMs: 2, now: tickingClock() });
    const log: string[] = [];
    const both = Promise.all([runner.run(job('a', 4, log)), runner.run(job('b', 4, log))]);
    const turns = (async () => {
      for (let turn = 0; turn < 6; turn += 1) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        log.push('|');
      }
    })();
    await expect(both).resolves.toEqual(['a', 'b']);
    await turns;
    // The clock reads 1 ms for the deadline and 1 ms per step: two steps per 2 ms slice, then a turn of the loop.
    expect(log.join('').replace(/\|+$/, '')).toBe('aa|bb|aa|bb');
  });

  it('rejects the job whose step throws and goes on with the others', async () => {
    const runner = createStepRunner({ sliceMs: 1_000 });
    function* failing(): Generator<undefined, string, undefined> {
      yield;
      throw new Error('step failed');
    }
    const log: string[] = [];
    const [failed, fine] = await Promise.allSettled([runner.run(failing()), runner.run(job('b', 2, log))]);
    expect(failed).toMatchObject({ status: 'rejected', reason: new Error('step failed') });
    expect(fine).toEqual({ status: 'fulfilled', value: 'b' });
  });
});
