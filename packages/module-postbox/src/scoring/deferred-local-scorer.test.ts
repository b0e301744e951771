import { describe, expect, it } from 'vitest';
import { deferredLocalScorer } from './deferred-local-scorer.js';
import type { LocalInjectionScorer } from './local-scorer.js';

describe('deferredLocalScorer', () => {
  const fake = (): LocalInjectionScorer => ({
    id: 'local-test',
    scoreSync: () => 0.25,
    explain: () => ({ score: 0.25, signals: [], evidence: [] }),
    score: async () => 0.25,
  });

  it('builds the scorer on first use, once, and answers as it does', async () => {
    let built = 0;
    const scorer = deferredLocalScorer(() => {
      built += 1;
      return fake();
    });
    expect(built).toBe(0);
    expect(scorer.id).toBe('local-test');
    expect(scorer.scoreSync({ subject: 's', text: 't', html: null })).toBe(0.25);
    expect(await scorer.score({ subject: 's', text: 't', html: null })).toBe(0.25);
    expect(scorer.explain({ subject: 's', text: 't', html: null })).toEqual({ score: 0.25, signals: [], evidence: [] });
    expect(built).toBe(1);
  });

  it('builds it when loaded (module start), before anything is scored', () => {
    let built = 0;
    const scorer = deferredLocalScorer(() => {
      built += 1;
      return fake();
    });
    scorer.load();
    scorer.load();
    expect(built).toBe(1);
  });
});
