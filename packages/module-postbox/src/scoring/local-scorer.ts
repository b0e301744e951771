import { FEATURE_NAMES, type FeatureName, injectionFeatures } from './injection-features.js';
import { bundledInjectionModel, type InjectionModel } from './injection-model.js';
import type { InjectionScorer, ScoringInput } from './injection-scorer.js';
import { createSegmentReader, type SegmentSink } from './segment-features.js';

/** Logistic function. */
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** A hand-written signal is reported as fired when it adds at least this much to the logit. */
export const SIGNAL_REPORT_MIN = 0.5;
/** Sentences reported as evidence at most. */
export const EVIDENCE_MAX = 3;
/** A sentence is reported as evidence when its n-grams add at least this much to the logit. */
export const EVIDENCE_MIN = 0.25;

/** Why a message got its score. */
export interface InjectionExplanation {
  /** The score, in [0, 1], rounded to 4 decimals. */
  score: number;
  /** Hand-written signals that added at least {@link SIGNAL_REPORT_MIN} to the logit, strongest first (names from `FEATURE_NAMES`). */
  signals: FeatureName[];
  /**
   * Up to {@link EVIDENCE_MAX} sentences of the message (lower-cased, cut to
   * {@link EVIDENCE_TEXT_MAX} characters) whose n-grams scored highest, at
   * least {@link EVIDENCE_MIN} each, strongest first, with their n-gram
   * score; the first one is the sentence the score counted. Text the sender wrote.
   */
  evidence: Array<{ text: string; weight: number }>;
}

/** The built-in scorer, with synchronous entry points (ingest, benchmarks, evaluation). */
export interface LocalInjectionScorer extends InjectionScorer {
  /** The same score as `score`, computed synchronously. */
  scoreSync(input: ScoringInput): number;
  /** The score with the signals and sentences that drove it. */
  explain(input: ScoringInput): InjectionExplanation;
}

/** Longest evidence text, in characters. */
export const EVIDENCE_TEXT_MAX = 80;

/**
 * The default {@link InjectionScorer}: runs in-process with no network and
 * no download. A logistic model (`local-v2`, `data/injection-model.json`,
 * trained by `src/build/train-injection-model-cli.ts` on training data only):
 *
 *   logit = bias + Σ signal weight · signal + max over sentences of (Σ weights of the sentence's features)
 *
 * - signals: the hand-written message features of `injection-features.ts`
 *   (instruction-override phrasing, model/role impersonation, chat-template
 *   markers, directions about the model's output, prompt-style tasks and
 *   questions, encodings, tool/command and exfiltration requests, lures,
 *   hidden HTML, comments, zero-width and Unicode tag characters,
 *   base64/hex payloads, link tricks);
 * - sentence features (`segment-features.ts`): hashed word unigrams,
 *   bigrams, character 3–5-grams, the sentence's first word and final
 *   punctuation, and which instruction phrase families occur in it, each
 *   counted once per sentence; sentences of the visible and of the hidden text.
 *
 * The sentence that reads most like an instruction decides, so an
 * instruction inserted into a long ordinary mail is not diluted by it.
 * Work is bounded: at most 16 000 + 8 000 characters and 6 000 words per
 * text go through the n-grams; a 20 KB message scores in well under a
 * millisecond (bench/injection-eval.ts).
 * @param options.model another model instead of the bundled one.
 * @throws Error when the bundled model file is missing or invalid.
 */
export function createLocalInjectionScorer(options: { model?: InjectionModel } = {}): LocalInjectionScorer {
  const model = options.model ?? bundledInjectionModel();
  const weights = model.ngramWeights;
  const read = createSegmentReader(model.hashBits);

  const explain = (input: ScoringInput): InjectionExplanation => {
    const features = injectionFeatures(input);
    let logit = model.bias;
    const fired: Array<{ name: FeatureName; weight: number }> = [];
    FEATURE_NAMES.forEach((name, index) => {
      const contribution = (model.signalWeights[index] ?? 0) * (features.signals[index] ?? 0);
      logit += contribution;
      if (contribution >= SIGNAL_REPORT_MIN) fired.push({ name, weight: contribution });
    });

    const evidence: Array<{ text: string; weight: number }> = [];
    let best = Number.NEGATIVE_INFINITY;
    let sum = 0;
    const sink: SegmentSink = {
      feature: (bucket) => {
        sum += weights[bucket] ?? 0;
      },
      end: (start, end, text) => {
        const weight = sum;
        sum = 0;
        if (weight > best) best = weight;
        if (weight < EVIDENCE_MIN) return;
        const last = evidence[EVIDENCE_MAX - 1];
        if (last && weight <= last.weight) return;
        evidence.push({ text: text.slice(start, Math.min(end, start + EVIDENCE_TEXT_MAX)), weight });
        evidence.sort((a, b) => b.weight - a.weight);
        if (evidence.length > EVIDENCE_MAX) evidence.length = EVIDENCE_MAX;
      },
    };
    read(features.visibleText, features.visibleMatches, sink);
    if (features.hiddenText) read(features.hiddenText, features.hiddenMatches, sink);
    if (best !== Number.NEGATIVE_INFINITY) logit += best;

    fired.sort((a, b) => b.weight - a.weight);
    return {
      score: Math.round(sigmoid(logit) * 10_000) / 10_000,
      signals: fired.map((item) => item.name),
      evidence: evidence.map((item) => ({ text: item.text, weight: Math.round(item.weight * 100) / 100 })),
    };
  };
  const scoreSync = (input: ScoringInput): number => explain(input).score;
  return {
    id: model.id,
    scoreSync,
    explain,
    score: async (input) => scoreSync(input),
  };
}
