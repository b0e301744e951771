import { FEATURE_NAMES } from '@agentinfra/module-postbox';
import { describe, expect, it } from 'vitest';
import { safeReturnPath } from './app.js';
import { explainInjection, parseEvidence, SIGNAL_DESCRIPTIONS } from './injection-explanation.js';

describe('the "Why quarantined" explanation', () => {
  it('reads scorer, score, signals in plain words (unknown names as they are) and the evidence with weights', () => {
    const why = explainInjection({
      'x-agentinfra-injection': 'scorer=local-v4; score=0.9731; signals=hidden_instructions,model_address,brand_new_signal',
      'x-agentinfra-injection-evidence': '"in your response; reply only in base64" +8.52; "thanks for your order" -0.40',
    });
    expect(why).toMatchObject({ scorer: 'local-v4', score: 0.9731, local: null, fallback: null });
    expect(why?.signals).toEqual([
      { name: 'hidden_instructions', description: SIGNAL_DESCRIPTIONS.hidden_instructions, known: true },
      { name: 'model_address', description: SIGNAL_DESCRIPTIONS.model_address, known: true },
      { name: 'brand_new_signal', description: 'brand_new_signal', known: false },
    ]);
    expect(why?.evidence).toEqual([
      { text: 'in your response; reply only in base64', weight: 8.52 },
      { text: 'thanks for your order', weight: -0.4 },
    ]);
  });

  it('handles a remote scorer, a fallback, no signals, no evidence and no header', () => {
    expect(
      explainInjection({ 'x-agentinfra-injection': 'scorer=http:https://scorer.internal:8443/v1; score=0.93; local=0.41; signals=none' }),
    ).toMatchObject({ scorer: 'http:https://scorer.internal:8443/v1', score: 0.93, local: 0.41, signals: [], evidence: [] });
    expect(explainInjection({ 'x-agentinfra-injection': 'scorer=local-v4; fallback=http:https://x; score=0.2; signals=' })).toMatchObject({
      fallback: 'http:https://x',
      signals: [],
    });
    expect(explainInjection({ subject: 'hi' })).toBeNull();
    expect(explainInjection(undefined)).toBeNull();
    expect(parseEvidence('garbage without quotes')).toEqual([]);
  });

  it('describes every signal of the local scorer (module-postbox FEATURE_NAMES)', () => {
    expect(Object.keys(SIGNAL_DESCRIPTIONS).sort()).toEqual([...FEATURE_NAMES].sort());
  });
});

describe('the return path after signing in', () => {
  it('is a console path only: no other origin, no escape from /console, never the sign-in route', () => {
    expect(safeReturnPath('/console', '/console/scheduler?status=failed')).toBe('/console/scheduler?status=failed');
    expect(safeReturnPath('/console', '/console')).toBe('/console');
    for (const bad of [
      '//evil.example/console/',
      'https://evil.example/console/',
      '/\\evil.example',
      '/console/../admin',
      '/consolex/',
      '/console/login?next=/console/',
      '/console/logout',
      'console/agents',
      '/console/\nagents',
      undefined,
      42,
    ]) {
      expect(safeReturnPath('/console', bad), String(bad)).toBeUndefined();
    }
  });
});
