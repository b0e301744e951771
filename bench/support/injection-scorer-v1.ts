import { injectionFeatures } from '../../packages/module-postbox/src/scoring/injection-features.js';
import type { ScoringInput } from '../../packages/module-postbox/src/scoring/injection-scorer.js';

/**
 * The previous local scorer (`local-v1`, issue #6), kept here so that
 * bench/injection-eval.ts measures it in the same run as the current one:
 * a logistic model over the 20 hand-written signals only (same features,
 * weights as shipped in `feature-weights.ts` before issue #17).
 */
const V1_BIAS = -2.876;
const V1_WEIGHTS = [
  4.54, 3.633, 5.417, 5.429, 1.254, 0.757, 0.709, 3.549, 1.625, 0, 5.478, 0.5, 4.277, 1.481, 0.5, 3.683, 3.946, 4.446, 3, 3.452,
];

/** The `local-v1` score of a message, in [0, 1] (rounded to 4 decimals as it was). */
export function scoreV1(input: ScoringInput): number {
  const { signals } = injectionFeatures(input);
  let logit = V1_BIAS;
  for (let i = 0; i < signals.length; i += 1) logit += (V1_WEIGHTS[i] ?? 0) * (signals[i] ?? 0);
  return Math.round((1 / (1 + Math.exp(-logit))) * 10_000) / 10_000;
}
