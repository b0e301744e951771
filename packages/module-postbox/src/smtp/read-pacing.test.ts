import { nextIoTurn } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import { createReadPacing } from './read-pacing.js';

/** A stream stand-in that records pause/resume calls. */
function fakeStream(log: string[], name: string) {
  return { pause: () => log.push(`pause ${name}`), resume: () => log.push(`resume ${name}`) };
}

describe('createReadPacing', () => {
  it('pauses every stream that takes bytes once the turn budget is spent, and resumes them after the next poll', async () => {
    const pacing = createReadPacing(100);
    const log: string[] = [];
    const a = fakeStream(log, 'a');
    const b = fakeStream(log, 'b');
    pacing.took(60, a);
    expect(log).toEqual([]);
    pacing.took(60, b);
    pacing.took(10, a);
    expect(log).toEqual(['pause b', 'pause a']);
    await nextIoTurn();
    expect(log).toEqual(['pause b', 'pause a', 'resume b', 'resume a']);
  });

  it('starts each turn with a fresh budget', async () => {
    const pacing = createReadPacing(100);
    const log: string[] = [];
    const a = fakeStream(log, 'a');
    pacing.took(90, a);
    await nextIoTurn();
    pacing.took(90, a);
    expect(log).toEqual([]);
  });
});
