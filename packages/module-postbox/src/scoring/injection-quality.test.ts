import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { operatingPoint, rocAuc, type ScoredLabel } from '../build/classifier-metrics.js';
import {
  bipiaAvailable,
  bipiaDirectory,
  bipiaLabelled,
  type LabelledMail,
  labelledSetFile,
  splitLabelledSet,
} from '../build/injection-data.js';
import { decodeInjectionModel, defaultModelFile, encodeInjectionModel } from './injection-model.js';
import { createLocalInjectionScorer } from './local-scorer.js';
import { wordUnigramHash } from './text-ngrams.js';

/**
 * Quality of the committed model (`data/injection-model.json`) on data it
 * was not trained on, at the default threshold 0.5 (#17). The figures are
 * those bench/injection-eval.ts reports (bench/RESULTS.md), asserted with a
 * small margin so that a retrained or broken model that gets worse fails here.
 */
const scorer = createLocalInjectionScorer();
/** Indexes (`own:<index>`) of the held-out half, as first split with seed 17 (issue #17, local-v2): it must never change. */
const HELD_OUT_INDEXES = [
  2, 3, 5, 7, 9, 12, 13, 14, 16, 17, 18, 20, 22, 24, 25, 32, 33, 34, 36, 39, 40, 43, 44, 45, 46, 47, 49, 52, 54, 57, 60, 61, 65, 66, 67, 68,
  69, 70, 75, 76, 77, 79, 80, 81, 84, 86, 87, 89, 90, 91, 97, 99, 100, 102, 104, 107, 109, 112, 114, 115, 116, 118, 119, 122, 123, 131, 132,
  134, 135, 138, 139, 140, 141, 145,
];
/**
 * Whether two typed arrays hold the same elements, compared as bytes: `toEqual` walks ~10^6 elements one by one
 * (seconds of CPU). For the finite weights of a model, equal bytes are equal elements and the other way round.
 */
const sameElements = (a: Float32Array | Float64Array | Uint32Array | undefined, b: typeof a) =>
  a !== undefined &&
  b !== undefined &&
  a.constructor === b.constructor &&
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const scoreAll = (mails: readonly LabelledMail[]): ScoredLabel[] =>
  mails.map((mail) => ({ score: scorer.scoreSync(mail.input), label: mail.label }));

describe('local-v6 injection model quality (#17)', () => {
  it('splits the labelled set the same way every time, and never trains on messages marked always_held_out', () => {
    const { train, heldOut } = splitLabelledSet();
    expect(splitLabelledSet()).toEqual({ train, heldOut });
    expect([train.length, heldOut.length]).toEqual([169, 74]);
    expect(heldOut.filter((mail) => mail.label === 1)).toHaveLength(30);
    expect(heldOut.map((mail) => Number(mail.group.slice('own:'.length))).sort((a, b) => a - b)).toEqual(HELD_OUT_INDEXES);
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

  it('adding training_only messages leaves the held-out half as it was', () => {
    const { messages } = JSON.parse(readFileSync(labelledSetFile(), 'utf8')) as { messages: Array<{ training_only?: boolean }> };
    const earlier = { messages: messages.filter((message) => !message.training_only) };
    const file = join(mkdtempSync(join(tmpdir(), 'injection-set-')), 'set.json');
    writeFileSync(file, JSON.stringify(earlier));
    expect(splitLabelledSet(file).heldOut).toEqual(splitLabelledSet().heldOut);
  });

  it('held-out half of the labelled set: ROC-AUC ≥ 0.98, recall ≥ 0.95 with ≤ 5 % false quarantine', () => {
    const scored = scoreAll(splitLabelledSet().heldOut);
    const at = operatingPoint(scored, 0.5);
    expect(rocAuc(scored)).toBeGreaterThanOrEqual(0.98);
    expect(at.recall).toBeGreaterThanOrEqual(0.95);
    expect(at.falseQuarantine).toBeLessThanOrEqual(0.05);
  });

  it.runIf(bipiaAvailable())('BIPIA e-mail test: ROC-AUC ≥ 0.99, recall ≥ 0.87 with ≤ 2 % false quarantine', () => {
    const scored = scoreAll(bipiaLabelled('test'));
    const at = operatingPoint(scored, 0.5);
    expect([at.injections, at.ordinary]).toEqual([11_250, 50]);
    expect(rocAuc(scored)).toBeGreaterThanOrEqual(0.99);
    expect(at.recall).toBeGreaterThanOrEqual(0.87);
    expect(at.falseQuarantine).toBeLessThanOrEqual(0.02);
  });
  it.skipIf(bipiaAvailable())(`BIPIA e-mail test: skipped, no data set at ${bipiaDirectory()} (set AGENTINFRA_BIPIA_DIR)`, () => {});

  it('the model file decodes to what it encodes (quantised n-gram weights, every signal named, topic vectors)', () => {
    const file = JSON.parse(readFileSync(defaultModelFile(), 'utf8')) as unknown;
    const model = decodeInjectionModel(file);
    expect(model.id).toBe('local-v6');
    expect(model.topics?.dimensions).toBe(32);
    expect(model.topics?.vectors.length).toBeGreaterThan(9_000 * 32);
    const rowOfWord = (word: string) => {
      const hash = wordUnigramHash(word);
      expect(hash, word).not.toBeNull();
      return model.topics?.rowOf(hash as number);
    };
    for (const word of ['payment', 'capital', 'brazil', 'poem']) expect(rowOfWord(word)).toBeGreaterThanOrEqual(0);
    expect(rowOfWord('inv88231')).toBe(-1);
    const again = decodeInjectionModel(encodeInjectionModel(model, {}));
    expect(sameElements(again.ngramWeights, model.ngramWeights)).toBe(true);
    expect(sameElements(again.topics?.hashes, model.topics?.hashes)).toBe(true);
    expect(sameElements(again.topics?.vectors, model.topics?.vectors)).toBe(true);
    expect(again.signalWeights).toEqual(model.signalWeights);
    expect(() => decodeInjectionModel({ ...(file as object), signalWeights: {} })).toThrow(/no weight for the signal/);
    expect(() => decodeInjectionModel({ ...(file as object), format: 'other' })).toThrow();
  });
});
