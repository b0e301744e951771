import { readFileSync, writeFileSync } from 'node:fs';
import {
  createCompactVectorTable,
  decodeVectorsFile,
  defaultVectorsFile,
  fitCommonComponents,
  sifWeights,
  WORDVEC_ENCODER_OPTIONS,
} from '@agentinfra/adapter-wordvec';
import { seededRandom, shuffle } from '@agentinfra/core/testing';
import { FEATURE_NAMES, type FeatureName, injectionFeatures } from '../scoring/injection-features.js';
import {
  decodeTopicTable,
  defaultModelFile,
  encodeInjectionModel,
  encodeTopicVectors,
  type InjectionModel,
  type TopicVectors,
} from '../scoring/injection-model.js';
import { createSegmentReader, segmentBuckets } from '../scoring/segment-features.js';
import { wordUnigramHash } from '../scoring/text-ngrams.js';
import { operatingPoint, rocAuc, type ScoredLabel } from './classifier-metrics.js';
import { bipiaDirectory, INSERT_POSITIONS, insertInto, type LabelledMail, readBipia, splitLabelledSet } from './injection-data.js';
import { type LogisticModel, logitOf, type TrainingExample, type TrainingOptions, trainLogistic } from './logistic-training.js';

/**
 * Trains the local injection model on training data only and writes
 * `data/injection-model.json`:
 *
 *   pnpm --filter @agentinfra/module-postbox build:injection-model
 *   (reads ../shared/datasets/bipia, or AGENTINFRA_BIPIA_DIR)
 *
 * Training data: BIPIA email_train × text_attack_train (attack at the
 * start, middle or end → 1, the e-mail alone → 0), the training half of
 * bench/data/postbox-injection-set.json (with the messages marked
 * `training_only`, written for local-v3). Each source carries the same
 * total weight per class. (Up to local-v5 it also had ordinary-mail
 * variants, a sentence of another training e-mail inserted → 0; with the
 * topic features they cost recall at the calibrated threshold in 10 of 12
 * fold assignments: bench/RESULTS.md "local-v6".)
 *
 * Topic vectors (`segment-topics.ts`), written into the model file: the
 * {@link TOPIC_WORDS} most frequent words of the word-vector embedder's
 * table (`@agentinfra/adapter-wordvec`, built at install), projected on the
 * {@link TOPIC_DIMENSIONS} principal directions of their vectors and scaled
 * by the embedder's SIF weight (rare words weigh more); training reads them
 * quantised, as the scorer does.
 *
 * Calibration, also from training data only: 5-fold cross-validation
 * grouped by e-mail, by attack category and by labelled message (each fold
 * scores e-mails, attack categories and messages its model never saw); the
 * threshold logit is set where the out-of-fold false-quarantine rate of the
 * real ordinary mail of each source is at most {@link TARGET_FALSE_QUARANTINE}, and a
 * one-parameter Platt fit on the out-of-fold logits sets the slope, so that
 * score 0.5 (the default `postbox_quarantine_threshold`) is that operating
 * point. The test splits are never read.
 */

/**
 * Seed of the fold assignment and of the attacks' positions: 1717 for the
 * committed model; `INJECTION_TRAINING_SEED` runs the cross-validation on
 * another fold assignment (the four-seed checks of bench/RESULTS.md).
 */
export const TRAINING_SEED = Number(process.env.INJECTION_TRAINING_SEED ?? 1717);
/**
 * Out-of-fold false-quarantine rate of real ordinary mail, per source, that
 * the 0.5 threshold is calibrated to: issue #17's limits (BIPIA 2 %,
 * labelled set 5 %). The first calibration used half of them as a margin,
 * and quarantined a quarter fewer attacks for it; see bench/RESULTS.md.
 */
export const TARGET_FALSE_QUARANTINE = { bipia: 0.02, own: 0.05 } as const;
const FOLDS = 5;

/**
 * Words and dimensions of the topic vectors. Chosen by the four-seed
 * cross-validation below (training data only; bench/RESULTS.md "local-v5"):
 * 10,000 × 32 against 20,000 × 16 or 32, 50,000 × 32 and the embedder's
 * full 100-dimension sentence vectors.
 */
const TOPIC_WORDS = 10_000;
const TOPIC_DIMENSIONS = 32;

/** Adam steps of the pretraining on attack instructions alone. */
const PRETRAINING_STEPS = 200;

/**
 * Hand-set prior weights of the message signals (raw logit units, before
 * calibration), which the fit is pulled towards. Signals absent here are
 * left out of the model (weight 0): the phrase families that ordinary mail
 * uses too (tasks, questions, requests, directions about a reply,
 * transformations, lures) and the share of instruction sentences enter the
 * model per sentence, as `cue` features, instead; counted per message they
 * fire on long ordinary mail (cross-validated ROC-AUC on BIPIA 0.971 with
 * all ten families per message, 0.980 without). The families kept are rare
 * in ordinary mail, and BIPIA's attacks never use them, so their weights
 * come mostly from this prior. `delegated_authority` (local-v3): prior 4
 * beat 0 (cue only) and 2 by cross-validation.
 */
const SIGNAL_PRIOR: Readonly<Partial<Record<FeatureName, number>>> = {
  override: 6,
  model_address: 5,
  role_marker: 5,
  tool_or_exfiltration: 3,
  hidden_instructions: 6,
  invisible_chars: 1,
  tag_chars: 6,
  hidden_elements: 1,
  text_comments: 1,
  encoded_texts: 3,
  mismatched_links: 2,
  trick_links: 3,
  markdown_exfil: 5,
  delegated_authority: 4,
};
const signalPrior = Float64Array.from(FEATURE_NAMES, (name) => SIGNAL_PRIOR[name] ?? 0);

/**
 * Chosen by the cross-validation below (L2 1e-4 … 1e-2, 0 … 300 steps tried; the test splits were not used).
 * Checked again for local-v3: L2 1e-3 and 1e-2, 500 steps, no pretraining and 2^16 or 2^20 buckets were no better.
 * Checked with a first form of the place features (`segment-place.ts`, on every first and last segment), over four
 * fold assignments (this seed and 1–3): L2 1e-3 and 5e-4, 3 or 10 inserted variants, each attack at all three
 * positions and attacks also inserted into the labelled set's ordinary mail were no better (bench/RESULTS.md).
 */
export const TRAINING_OPTIONS: TrainingOptions = {
  hashBits: 18,
  l2Ngrams: 3e-3,
  l2Signals: 1e-2,
  signalPrior,
  steps: 300,
  learningRate: 0.05,
};

/** A training mail, its source, and whether it is a BIPIA attack on its own. */
interface SourcedMail {
  mail: LabelledMail;
  /** `bipia` or `own`: weights are balanced per source and class. */
  source: 'bipia' | 'own';
  /** A BIPIA attack instruction on its own (used only to pretrain the n-gram weights; never scored in the cross-validation). */
  alone: boolean;
}

/**
 * The training mails: BIPIA train (each e-mail alone, and each e-mail × attack
 * with the attack at one position drawn with `random`), each BIPIA attack
 * alone (for the pretraining), and the labelled set's training half.
 */
function trainingMails(random: () => number): SourcedMail[] {
  const { emails, attacks } = readBipia('train');
  const bipia: SourcedMail[] = [];
  emails.forEach((email, index) => {
    const group = `bipia:train:${index}`;
    const mail: LabelledMail = { input: { ...email, html: null }, label: 0, group, kind: 'email' };
    bipia.push({ mail, source: 'bipia', alone: false });
    for (const attack of attacks) {
      const position = INSERT_POSITIONS[Math.floor(random() * INSERT_POSITIONS.length)] ?? 'end';
      const input = { subject: email.subject, text: insertInto(email.text, attack.text, position), html: null };
      bipia.push({ mail: { input, label: 1, group, kind: attack.category }, source: 'bipia', alone: false });
    }
  });
  const alone = attacks.map(
    (attack, index): SourcedMail => ({
      mail: { input: { subject: '', text: attack.text, html: null }, label: 1, group: `attack:${index}`, kind: attack.category },
      source: 'bipia',
      alone: true,
    }),
  );
  const own = splitLabelledSet().train.map((mail): SourcedMail => ({ mail, source: 'own', alone: false }));
  return [...bipia, ...alone, ...own];
}

type Features = Pick<TrainingExample, 'signals' | 'segments'>;

/**
 * The topic vectors of the model (see the file comment); words the n-gram
 * pass does not read as one word, and words whose hash repeats an earlier
 * one, are left out.
 */
function topicVectors(): TopicVectors {
  const table = createCompactVectorTable(decodeVectorsFile(readFileSync(defaultVectorsFile())), TOPIC_WORDS);
  const { dimensions } = table;
  const full = new Float32Array(TOPIC_WORDS * dimensions);
  for (let row = 0; row < TOPIC_WORDS; row += 1) table.addWordVector(row, 1, full.subarray(row * dimensions, (row + 1) * dimensions));
  const principal = fitCommonComponents(full, dimensions, TOPIC_WORDS, TOPIC_DIMENSIONS);
  const weight = sifWeights(table, WORDVEC_ENCODER_OPTIONS.sifA);
  const hashes: number[] = [];
  const vectors: number[] = [];
  const seen = new Set<number>();
  for (let row = 0; row < TOPIC_WORDS; row += 1) {
    const hash = wordUnigramHash(table.wordAt(row));
    if (hash === null || seen.has(hash)) continue;
    seen.add(hash);
    hashes.push(hash);
    for (const direction of principal.directions) {
      let dot = 0;
      for (let i = 0; i < dimensions; i += 1) dot += ((full[row * dimensions + i] ?? 0) - (principal.mean[i] ?? 0)) * (direction[i] ?? 0);
      vectors.push(dot * weight(table.rankOf(row)));
    }
  }
  return { hashes: Uint32Array.from(hashes), vectors: Float32Array.from(vectors), dimensions: TOPIC_DIMENSIONS };
}

/** The topic table as the scorer will read it (quantised), for training and for the model file. */
const topics = decodeTopicTable(encodeTopicVectors(topicVectors()));
const reader = createSegmentReader(TRAINING_OPTIONS.hashBits, topics);

/** Signals and per-segment feature buckets of a mail. */
function featuresOf(mail: LabelledMail): Features {
  const features = injectionFeatures(mail.input);
  const segments = segmentBuckets(reader, [
    { text: features.visibleText, matches: features.visibleMatches },
    { text: features.hiddenText, matches: features.hiddenMatches },
  ]);
  FEATURE_NAMES.forEach((name, index) => {
    if (SIGNAL_PRIOR[name] === undefined) features.signals[index] = 0;
  });
  return { signals: features.signals, segments };
}

/** Training examples with weights: per source, each class carries a total weight of 1. */
function weighted(items: readonly SourcedMail[], features: ReadonlyMap<SourcedMail, Features>) {
  const totals = new Map<string, number>();
  for (const item of items) totals.set(`${item.source}:${item.mail.label}`, (totals.get(`${item.source}:${item.mail.label}`) ?? 0) + 1);
  return items.map((item): TrainingExample => {
    const f = features.get(item) as Features;
    return { ...f, label: item.mail.label, weight: 1 / (totals.get(`${item.source}:${item.mail.label}`) ?? 1) };
  });
}

/** Assigns each group and each attack category to one of {@link FOLDS} folds. */
function foldsOf(items: readonly SourcedMail[], random: () => number) {
  const assign = (keys: string[]) => {
    const unique = [...new Set(keys)].sort();
    shuffle(unique, random);
    return new Map(unique.map((key, index) => [key, index % FOLDS]));
  };
  const groupFold = assign(items.map((item) => item.mail.group));
  const categoryFold = assign(items.filter((item) => item.source === 'bipia' && item.mail.label === 1).map((item) => item.mail.kind));
  return { groupFold, categoryFold };
}

/**
 * Fits the model in two stages: the n-gram weights are pretrained on BIPIA
 * attack instructions alone against real ordinary mail (no signals), then
 * everything is fitted on whole messages from there. Only single-instruction
 * positives pretrain: with all weights at 0 every sentence of a message ties,
 * and the first one (the subject) took the whole gradient, so local-v3 with
 * the labelled injections in the pretraining scored "Your order is on its
 * way" as an injection (cross-validation was the same either way).
 */
function fit(train: readonly SourcedMail[], features: ReadonlyMap<SourcedMail, Features>): LogisticModel {
  const noSignals = new Float64Array(FEATURE_NAMES.length);
  const pretraining = train.filter((item) => item.alone || item.mail.label === 0);
  const initial = trainLogistic(
    weighted(pretraining, features).map((example) => ({ ...example, signals: noSignals })),
    { ...TRAINING_OPTIONS, steps: PRETRAINING_STEPS },
  );
  return trainLogistic(
    weighted(
      train.filter((item) => !item.alone),
      features,
    ),
    { ...TRAINING_OPTIONS, initial: { ...initial, signalWeights: Float64Array.from(signalPrior) } },
  );
}

/** Weighted log loss of `slope · (logit − offset)`, minimised over the slope by golden-section search. */
function plattSlope(points: ReadonlyArray<{ logit: number; label: 0 | 1; weight: number }>, offset: number): number {
  const loss = (slope: number) =>
    points.reduce((sum, point) => {
      const z = slope * (point.logit - offset);
      const logP = -Math.log1p(Math.exp(-z));
      const logNotP = -Math.log1p(Math.exp(z));
      return sum - point.weight * (point.label === 1 ? logP : logNotP);
    }, 0);
  let low = 0.05;
  let high = 5;
  const ratio = (Math.sqrt(5) - 1) / 2;
  for (let i = 0; i < 60; i += 1) {
    const a = high - ratio * (high - low);
    const b = low + ratio * (high - low);
    if (loss(a) < loss(b)) high = b;
    else low = a;
  }
  return (low + high) / 2;
}

function main() {
  const started = Date.now();
  const random = seededRandom(TRAINING_SEED);
  const items = trainingMails(random);
  const features = new Map(items.map((item) => [item, featuresOf(item.mail)]));
  process.stdout.write(`${items.length} training mails featurised in ${Date.now() - started} ms (BIPIA from ${bipiaDirectory()})\n`);

  const { groupFold, categoryFold } = foldsOf(items, random);
  const outOfFold: Array<{ item: SourcedMail; logit: number }> = [];
  for (let fold = 0; fold < FOLDS; fold += 1) {
    const held = (item: SourcedMail) => !item.alone && groupFold.get(item.mail.group) === fold;
    const heldCategory = (item: SourcedMail) =>
      item.source === 'bipia' && item.mail.label === 1 && categoryFold.get(item.mail.kind) === fold;
    const train = items.filter((item) => !held(item) && !heldCategory(item));
    const evaluate = items.filter((item) => held(item) && (item.source !== 'bipia' || item.mail.label === 0 || heldCategory(item)));
    const model = fit(train, features);
    for (const item of evaluate) outOfFold.push({ item, logit: logitOf(model, features.get(item) as Features) });
    process.stdout.write(`fold ${fold + 1}/${FOLDS}: trained on ${train.length}, scored ${evaluate.length} (${Date.now() - started} ms)\n`);
  }

  const offset = Math.max(
    ...(['bipia', 'own'] as const).map((source) => {
      const negatives = outOfFold
        .filter((point) => point.item.source === source && point.item.mail.label === 0)
        .map((point) => point.logit)
        .sort((a, b) => b - a);
      return (negatives[Math.floor(TARGET_FALSE_QUARANTINE[source] * negatives.length)] ?? 0) + 1e-6;
    }),
  );
  const sourceTotals = new Map<string, number>();
  for (const point of outOfFold) {
    const key = `${point.item.source}:${point.item.mail.label}`;
    sourceTotals.set(key, (sourceTotals.get(key) ?? 0) + 1);
  }
  const slope = plattSlope(
    outOfFold.map((point) => ({
      logit: point.logit,
      label: point.item.mail.label,
      weight: 1 / (sourceTotals.get(`${point.item.source}:${point.item.mail.label}`) ?? 1),
    })),
    offset,
  );
  const calibrated = (logit: number) => 1 / (1 + Math.exp(-slope * (logit - offset)));
  const crossValidation: Record<string, unknown> = {};
  for (const source of ['bipia', 'own'] as const) {
    const scored: ScoredLabel[] = outOfFold
      .filter((point) => point.item.source === source)
      .map((point) => ({ score: calibrated(point.logit), label: point.item.mail.label }));
    const at = operatingPoint(scored, 0.5);
    crossValidation[source] = {
      rocAuc: round(rocAuc(scored)),
      recall: round(at.recall),
      falseQuarantine: round(at.falseQuarantine),
      injections: at.injections,
      ordinary: at.ordinary,
    };
  }
  process.stdout.write(
    `cross-validation at 0.5 (offset ${offset.toFixed(3)}, slope ${slope.toFixed(3)}): ${JSON.stringify(crossValidation)}\n`,
  );

  const final: LogisticModel = fit(items, features);
  const model: InjectionModel = {
    id: 'local-v6',
    hashBits: TRAINING_OPTIONS.hashBits,
    bias: slope * (final.bias - offset),
    signalWeights: final.signalWeights.map((weight) => weight * slope),
    ngramWeights: final.ngramWeights.map((weight) => weight * slope),
    topics,
  };
  const file = encodeInjectionModel(model, {
    trainer: 'packages/module-postbox/src/build/train-injection-model-cli.ts',
    data: 'BIPIA email_train × text_attack_train (start/middle/end), postbox-injection-set.json training half (with its training_only messages)',
    seeds: { split: 'LABELLED_SET_SEED in injection-data.ts', training: TRAINING_SEED },
    options: TRAINING_OPTIONS,
    calibration: { targetFalseQuarantine: TARGET_FALSE_QUARANTINE, offset: round(offset), slope: round(slope) },
    topics: {
      words: topics.hashes.length,
      dimensions: TOPIC_DIMENSIONS,
      source: 'adapter-wordvec vectors file, principal directions, SIF-weighted',
    },
    crossValidation,
  });
  const path = defaultModelFile();
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
  process.stdout.write(`wrote ${path} (${file.ngramWeights.length} base64 chars of weights) in ${Date.now() - started} ms\n`);
}

const round = (value: number) => Math.round(value * 1_000) / 1_000;

main();
