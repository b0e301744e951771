/** One labelled score: `label` 1 = injection, 0 = ordinary mail. */
export interface ScoredLabel {
  score: number;
  label: 0 | 1;
}

/** Figures of a scorer at one threshold (a message is quarantined when its score is ≥ the threshold). */
export interface OperatingPoint {
  threshold: number;
  /** Share of injections quarantined (true-positive rate). */
  recall: number;
  /** Share of ordinary mail quarantined (false-positive rate). */
  falseQuarantine: number;
  /** Share of quarantined mail that is an injection (1 when nothing is quarantined). */
  precision: number;
  injections: number;
  ordinary: number;
}

/** Recall, false-quarantine rate and precision when mail scoring ≥ `threshold` is quarantined. */
export function operatingPoint(scored: readonly ScoredLabel[], threshold: number): OperatingPoint {
  let tp = 0;
  let fp = 0;
  let positives = 0;
  for (const { score, label } of scored) {
    if (label === 1) positives += 1;
    if (score >= threshold) {
      if (label === 1) tp += 1;
      else fp += 1;
    }
  }
  const negatives = scored.length - positives;
  return {
    threshold,
    recall: positives === 0 ? 0 : tp / positives,
    falseQuarantine: negatives === 0 ? 0 : fp / negatives,
    precision: tp + fp === 0 ? 1 : tp / (tp + fp),
    injections: positives,
    ordinary: negatives,
  };
}

/**
 * Area under the ROC curve: the probability that a random injection scores
 * above a random ordinary message, ties counted half (Mann–Whitney U).
 * @returns NaN when either class is empty.
 */
export function rocAuc(scored: readonly ScoredLabel[]): number {
  const sorted = [...scored].sort((a, b) => a.score - b.score);
  let rankSum = 0;
  let positives = 0;
  let index = 0;
  while (index < sorted.length) {
    let end = index;
    while (end + 1 < sorted.length && sorted[end + 1]?.score === sorted[index]?.score) end += 1;
    const rank = (index + end) / 2 + 1;
    for (let k = index; k <= end; k += 1) {
      if (sorted[k]?.label === 1) {
        rankSum += rank;
        positives += 1;
      }
    }
    index = end + 1;
  }
  const negatives = sorted.length - positives;
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

/** The ROC curve at the given thresholds (highest first): one {@link OperatingPoint} per threshold. */
export function rocPoints(scored: readonly ScoredLabel[], thresholds: readonly number[]): OperatingPoint[] {
  return [...thresholds].sort((a, b) => b - a).map((threshold) => operatingPoint(scored, threshold));
}
