import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { operatingPoint, rocAuc, type ScoredLabel } from '../build/classifier-metrics.js';
import { bipiaAvailable, bipiaDirectory, bipiaLabelled, type LabelledMail, splitLabelledSet } from '../build/injection-data.js';
import { decodeInjectionModel, defaultModelFile, encodeInjectionModel } from './injection-model.js';
import { createLocalInjectionScorer } from './local-scorer.js';

/**
 * Quality of the committed model (`data/injection-model.json`) on data it
 * was not trained on, at the default threshold 0.5 (#17). The figures are
 * those bench/injection-eval.ts reports (bench/RESULTS.md), asserted with a
 * small margin so that a retrained or broken model that gets worse fails here.
 */
const scorer = createLocalInjectionScorer();
const scoreAll = (mails: readonly LabelledMail[]): ScoredLabel[] =>
  mails.map((mail) => ({ score: scorer.scoreSync(mail.input), label: mail.label }));

describe('local-v2 injection model quality (#17)', () => {
  it('splits the labelled set the same way every time, and never trains on messages marked always_held_out', () => {
    const { train, heldOut } = splitLabelledSet();
    expect(splitLabelledSet()).toEqual({ train, heldOut });
    expect([train.length, heldOut.length]).toEqual([73, 74]);
    expect(heldOut.filter((mail) => mail.label === 1)).toHaveLength(30);
    const trainGroups = new Set(train.map((mail) => mail.group));
    expect(heldOut.some((mail) => trainGroups.has(mail.group))).toBe(false);
    const { messages } = JSON.parse(
      readFileSync(new URL('../../../../bench/data/postbox-injection-set.json', import.meta.url), 'utf8'),
    ) as {
      messages: Array<{ always_held_out?: boolean }>;
    };
    const forced = messages.flatMap((message, index) => (message.always_held_out ? [`own:${index}`] : []));
    expect(forced.length).toBeGreaterThan(0);
    for (const group of forced) expect(trainGroups.has(group)).toBe(false);
  });

  it('held-out half of the labelled set: ROC-AUC ≥ 0.90, recall ≥ 0.75 with ≤ 5 % false quarantine', () => {
    const scored = scoreAll(splitLabelledSet().heldOut);
    const at = operatingPoint(scored, 0.5);
    expect(rocAuc(scored)).toBeGreaterThanOrEqual(0.9);
    expect(at.recall).toBeGreaterThanOrEqual(0.75);
    expect(at.falseQuarantine).toBeLessThanOrEqual(0.05);
  });

  it.runIf(bipiaAvailable())('BIPIA e-mail test: ROC-AUC ≥ 0.98, recall ≥ 0.72 with ≤ 2 % false quarantine', () => {
    const scored = scoreAll(bipiaLabelled('test'));
    const at = operatingPoint(scored, 0.5);
    expect([at.injections, at.ordinary]).toEqual([11_250, 50]);
    expect(rocAuc(scored)).toBeGreaterThanOrEqual(0.98);
    expect(at.recall).toBeGreaterThanOrEqual(0.72);
    expect(at.falseQuarantine).toBeLessThanOrEqual(0.02);
  });
  it.skipIf(bipiaAvailable())(`BIPIA e-mail test: skipped, no data set at ${bipiaDirectory()} (set AGENTINFRA_BIPIA_DIR)`, () => {});

  it('the model file decodes to what it encodes (quantised n-gram weights, every signal named)', () => {
    const file = JSON.parse(readFileSync(defaultModelFile(), 'utf8')) as unknown;
    const model = decodeInjectionModel(file);
    expect(model.id).toBe('local-v2');
    const again = decodeInjectionModel(encodeInjectionModel(model, {}));
    expect(again.ngramWeights).toEqual(model.ngramWeights);
    expect(again.signalWeights).toEqual(model.signalWeights);
    expect(() => decodeInjectionModel({ ...(file as object), signalWeights: {} })).toThrow(/no weight for the signal/);
    expect(() => decodeInjectionModel({ ...(file as object), format: 'other' })).toThrow();
  });
});
