/**
 * Weighted logistic regression over dense signals and the best-scoring
 * segment of a message (max pooling over sentences of sparse binary n-gram
 * features, i.e. multiple-instance learning), fitted by full-batch gradient
 * descent with Adam: the same data and options always give the same model
 * (no sampling).
 */

/** One training example: hand-written signal values and, per segment, the distinct n-gram buckets present. */
export interface TrainingExample {
  signals: Float64Array;
  /** Per segment (sentence), the distinct bucket indexes of its n-grams (each counts 1). */
  segments: readonly Int32Array[];
  label: 0 | 1;
  /** Weight in the loss (the caller balances sources and classes). */
  weight: number;
}

/** Options of {@link trainLogistic}. */
export interface TrainingOptions {
  /** The n-gram table has `2^hashBits` buckets. */
  hashBits: number;
  /** L2 penalty on the n-gram weights (per unit of total example weight). */
  l2Ngrams: number;
  /** L2 penalty on the signal weights' distance from {@link TrainingOptions.signalPrior}. */
  l2Signals: number;
  /** Hand-set signal weights the fit is pulled towards (a Gaussian prior; default all 0). */
  signalPrior?: ArrayLike<number>;
  /** Full-batch Adam steps. */
  steps: number;
  /** Adam step size. */
  learningRate: number;
  /** Start from this model instead of all zeros. */
  initial?: LogisticModel;
}

/** A fitted model: logit = bias + Σ signalWeights·signals + max over segments of Σ ngramWeights[bucket] (0 without segments). */
export interface LogisticModel {
  bias: number;
  signalWeights: Float64Array;
  ngramWeights: Float32Array;
}

/** The best segment of an example under the n-gram weights: its index (−1 without segments) and sum. */
function bestSegment(weights: ArrayLike<number>, segments: readonly Int32Array[]): { index: number; sum: number } {
  let index = -1;
  let best = 0;
  segments.forEach((segment, k) => {
    let sum = 0;
    for (const bucket of segment) sum += weights[bucket] ?? 0;
    if (index === -1 || sum > best) {
      index = k;
      best = sum;
    }
  });
  return { index, sum: best };
}

/** The logit of one example under `model`. */
export function logitOf(model: LogisticModel, example: Pick<TrainingExample, 'signals' | 'segments'>): number {
  let logit = model.bias + bestSegment(model.ngramWeights, example.segments).sum;
  for (let j = 0; j < example.signals.length; j += 1) logit += (model.signalWeights[j] ?? 0) * (example.signals[j] ?? 0);
  return logit;
}

/**
 * Fits the model minimising the weighted mean log loss plus the L2
 * penalties (n-gram weights towards 0, signal weights towards their prior:
 * a signal the training data hardly exercises keeps its prior weight); the
 * n-gram gradient of an example goes to its best segment. Signal weights are kept ≥ 0 (each hand-written signal is
 * evidence for an injection, never against it); n-gram weights are free.
 * @throws Error when there are no examples.
 */
export function trainLogistic(examples: readonly TrainingExample[], options: TrainingOptions): LogisticModel {
  if (examples.length === 0) throw new Error('No training examples.');
  const signalCount = examples[0]?.signals.length ?? 0;
  const size = 2 ** options.hashBits;
  const totalWeight = examples.reduce((sum, example) => sum + example.weight, 0);
  const touchedFlags = new Uint8Array(size);
  for (const example of examples) for (const segment of example.segments) for (const bucket of segment) touchedFlags[bucket] = 1;
  const touched: number[] = [];
  touchedFlags.forEach((flag, bucket) => {
    if (flag) touched.push(bucket);
  });

  const ngramWeights = options.initial ? Float64Array.from(options.initial.ngramWeights) : new Float64Array(size);
  const signalWeights = options.initial ? Float64Array.from(options.initial.signalWeights) : new Float64Array(signalCount);
  let bias = options.initial?.bias ?? 0;
  const ngramGradient = new Float64Array(size);
  const ngramM = new Float64Array(size);
  const ngramV = new Float64Array(size);
  const signalGradient = new Float64Array(signalCount);
  const signalM = new Float64Array(signalCount);
  const signalV = new Float64Array(signalCount);
  let biasM = 0;
  let biasV = 0;
  const beta1 = 0.9;
  const beta2 = 0.999;
  const adam = (gradient: number, m: number, v: number, step: number) => {
    const nextM = beta1 * m + (1 - beta1) * gradient;
    const nextV = beta2 * v + (1 - beta2) * gradient * gradient;
    const update = (options.learningRate * (nextM / (1 - beta1 ** step))) / (Math.sqrt(nextV / (1 - beta2 ** step)) + 1e-8);
    return { m: nextM, v: nextV, update };
  };

  for (let step = 1; step <= options.steps; step += 1) {
    for (const bucket of touched) ngramGradient[bucket] = options.l2Ngrams * (ngramWeights[bucket] ?? 0);
    for (let j = 0; j < signalCount; j += 1)
      signalGradient[j] = options.l2Signals * ((signalWeights[j] ?? 0) - (options.signalPrior?.[j] ?? 0));
    let biasGradient = 0;
    for (const example of examples) {
      const best = bestSegment(ngramWeights, example.segments);
      let logit = bias + best.sum;
      for (let j = 0; j < signalCount; j += 1) logit += (signalWeights[j] ?? 0) * (example.signals[j] ?? 0);
      const error = (1 / (1 + Math.exp(-logit)) - example.label) * (example.weight / totalWeight);
      biasGradient += error;
      for (let j = 0; j < signalCount; j += 1) signalGradient[j] = (signalGradient[j] ?? 0) + error * (example.signals[j] ?? 0);
      for (const bucket of example.segments[best.index] ?? []) ngramGradient[bucket] = (ngramGradient[bucket] ?? 0) + error;
    }
    for (const bucket of touched) {
      const next = adam(ngramGradient[bucket] ?? 0, ngramM[bucket] ?? 0, ngramV[bucket] ?? 0, step);
      ngramM[bucket] = next.m;
      ngramV[bucket] = next.v;
      ngramWeights[bucket] = (ngramWeights[bucket] ?? 0) - next.update;
    }
    for (let j = 0; j < signalCount; j += 1) {
      const next = adam(signalGradient[j] ?? 0, signalM[j] ?? 0, signalV[j] ?? 0, step);
      signalM[j] = next.m;
      signalV[j] = next.v;
      signalWeights[j] = Math.max(0, (signalWeights[j] ?? 0) - next.update);
    }
    const next = adam(biasGradient, biasM, biasV, step);
    biasM = next.m;
    biasV = next.v;
    bias -= next.update;
  }
  return { bias, signalWeights, ngramWeights: Float32Array.from(ngramWeights) };
}
