import {
  FEATURE_NAMES,
  injectionHeaders,
  INJECTION_EVIDENCE_HEADER as POSTBOX_EVIDENCE_HEADER,
  INJECTION_HEADER as POSTBOX_HEADER,
} from '@agentinfra/module-postbox';
import { describe, expect, it } from 'vitest';
import { safeReturnPath } from './app.js';
import {
  explainInjection,
  INJECTION_EVIDENCE_HEADER,
  INJECTION_HEADER,
  parseEvidence,
  SIGNAL_DESCRIPTIONS,
} from './injection-explanation.js';

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

  it('reads the headers exactly as the postbox writes them (names and format), remote and fallback forms too', () => {
    expect([INJECTION_HEADER, INJECTION_EVIDENCE_HEADER]).toEqual([POSTBOX_HEADER, POSTBOX_EVIDENCE_HEADER]);
    const local = {
      score: 0.41,
      signals: ['override' as const, 'hidden_elements' as const],
      evidence: [{ text: 'ignore all previous instructions', weight: 6.13 }],
    };
    const remote = explainInjection(
      injectionHeaders({ scorerId: 'http:https://scorer.internal', score: 0.93, local, localScorerId: 'local-v6' }),
    );
    expect(remote).toMatchObject({ scorer: 'http:https://scorer.internal', score: 0.93, local: 0.41, fallback: null });
    expect(remote?.signals.map((signal) => signal.name)).toEqual(['override', 'hidden_elements']);
    expect(remote?.evidence).toEqual([{ text: 'ignore all previous instructions', weight: 6.13 }]);
    const fallback = explainInjection(
      injectionHeaders({
        scorerId: 'local-v6',
        score: 0.41,
        local,
        localScorerId: 'local-v6',
        fallbackFrom: 'http:https://scorer.internal',
      }),
    );
    expect(fallback).toMatchObject({ scorer: 'local-v6', score: 0.41, local: null, fallback: 'http:https://scorer.internal' });
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
