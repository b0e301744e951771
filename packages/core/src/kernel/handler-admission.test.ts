import { describe, expect, it } from 'vitest';
import { createHandlerAdmission } from './handler-admission.js';

/** A fake clock; `spend(ms)` stands for a handler holding the thread that long. */
function busyClock() {
  let time = 0;
  return {
    now: () => time,
    spend: (ms: number) => {
      time += ms;
    },
  };
}

describe('createHandlerAdmission', () => {
  it('admits at once while the iteration is within its budget and nobody waits', () => {
    const clock = busyClock();
    const admission = createHandlerAdmission({ budgetMs: 4, now: clock.now });
    expect(admission.enter()).toBeUndefined();
    clock.spend(3);
    expect(admission.enter()).toBeUndefined();
  });

  it('spreads handlers that arrive together over later iterations, in arrival order, within the budget', async () => {
    const clock = busyClock();
    const admission = createHandlerAdmission({ budgetMs: 4, now: clock.now });
    // Counts check phases; scheduled before the admission's own setImmediate, so each count precedes that phase's admissions.
    let iteration = 0;
    let ticking = true;
    const tick = () => {
      iteration += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const started: Array<{ handler: number; iteration: number }> = [];
    const handler = (index: number) => {
      started.push({ handler: index, iteration });
      clock.spend(1.5);
    };
    const done: Promise<void>[] = [];
    for (let index = 0; index < 8; index += 1) {
      const admitted = admission.enter();
      if (admitted === undefined) handler(index);
      else done.push(admitted.then(() => handler(index)));
    }
    // 1.5 ms each: three fit in the first iteration's 4 ms.
    expect(started.map((entry) => entry.handler)).toEqual([0, 1, 2]);
    await Promise.all(done);
    ticking = false;
    expect(started.map((entry) => entry.handler)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const perIteration = new Map<number, number>();
    for (const entry of started) perIteration.set(entry.iteration, (perIteration.get(entry.iteration) ?? 0) + 1);
    expect([...perIteration.values()]).toEqual([3, 3, 2]);
  });

  it('admits one waiting handler per iteration even when it alone overruns the budget', async () => {
    const clock = busyClock();
    const admission = createHandlerAdmission({ budgetMs: 4, now: clock.now });
    const order: number[] = [];
    const pending: Promise<void>[] = [];
    for (let index = 0; index < 4; index += 1) {
      const admitted = admission.enter();
      const run = () => {
        order.push(index);
        clock.spend(10);
      };
      if (admitted === undefined) run();
      else pending.push(admitted.then(run));
    }
    await Promise.all(pending);
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it('with a budget of 0 never makes a handler wait', () => {
    const clock = busyClock();
    const admission = createHandlerAdmission({ budgetMs: 0, now: clock.now });
    clock.spend(100);
    expect(admission.enter()).toBeUndefined();
  });
});
