import { type LinearModel, LOCAL_SCORER_MODEL } from './feature-weights.js';
import { FEATURE_NAMES, injectionFeatures } from './injection-features.js';
import type { InjectionScorer, ScoringInput } from './injection-scorer.js';

/** Logistic function. */
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** The built-in scorer with a synchronous entry point (benchmarks, evaluation). */
export interface LocalInjectionScorer extends InjectionScorer {
  /** The same score as `score`, computed synchronously. */
  scoreSync(input: ScoringInput): number;
}

/**
 * The default {@link InjectionScorer}: runs in-process with no network and
 * no download. It extracts the features of `injection-features.ts`
 * (instruction-override phrasing, model/role impersonation, chat-template
 * markers, directions about the model's output, prompt-style tasks and
 * questions, encodings and ciphers, tool/command and exfiltration requests,
 * lures, hidden HTML, comments, zero-width and Unicode tag characters,
 * base64/hex payloads, link tricks) and combines them with a logistic model
 * whose weights were fitted on labelled mail (`bench/injection-eval.ts`).
 * A 20 KB message scores in well under a millisecond.
 * @param options.model another fitted model (same feature order) instead of the bundled one.
 * @throws Error when the model's weights do not match the feature count.
 */
export function createLocalInjectionScorer(options: { model?: LinearModel } = {}): LocalInjectionScorer {
  const model = options.model ?? LOCAL_SCORER_MODEL;
  if (model.weights.length !== FEATURE_NAMES.length) {
    throw new Error(`The scorer model has ${model.weights.length} weights for ${FEATURE_NAMES.length} features.`);
  }
  const scoreSync = (input: ScoringInput): number => {
    const features = injectionFeatures(input);
    let logit = model.bias;
    for (let i = 0; i < features.length; i += 1) logit += (model.weights[i] ?? 0) * (features[i] ?? 0);
    return Math.round(sigmoid(logit) * 10_000) / 10_000;
  };
  return {
    id: model.id,
    scoreSync,
    score: async (input) => scoreSync(input),
  };
}
