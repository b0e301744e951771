/**
 * Evaluates the agent-postbox local injection scorer (and refits it with --fit).
 *
 *   npx tsx bench/injection-eval.ts          evaluate the bundled model (about 10 s)
 *   npx tsx bench/injection-eval.ts --fit    refit on the training splits, print the model, then evaluate it
 *
 * Data:
 * - BIPIA e-mail (../shared/datasets/bipia, MIT, Microsoft): each e-mail alone
 *   is label 0; each e-mail with one attack instruction inserted at its start,
 *   middle or end is label 1. Train = email_train × text_attack_train, test =
 *   email_test × text_attack_test (the test attack categories do not occur in
 *   training).
 * - bench/data/postbox-injection-set.json, written for this project: ordinary
 *   mail of many kinds (incl. hard negatives) and injection attempts of many
 *   kinds; even indexes train, odd indexes test.
 * Reported per test set: ROC-AUC, precision, recall and the false-quarantine
 * rate (share of ordinary mail quarantined) at the default threshold 0.5,
 * next to a baseline scorer that only matches "ignore previous
 * instructions"-style override phrases (measured in the same run), and the
 * scoring time per message.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LinearModel, LOCAL_SCORER_MODEL } from '../packages/module-postbox/src/scoring/feature-weights.js';
import { FEATURE_NAMES, injectionFeatures } from '../packages/module-postbox/src/scoring/injection-features.js';
import type { ScoringInput } from '../packages/module-postbox/src/scoring/injection-scorer.js';
import { createLocalInjectionScorer } from '../packages/module-postbox/src/scoring/local-scorer.js';

const here = dirname(fileURLToPath(import.meta.url));
const BIPIA = process.env.AGENTINFRA_BIPIA_DIR ?? join(here, '..', '..', 'shared', 'datasets', 'bipia');
const THRESHOLD = 0.5;

interface Example {
  input: ScoringInput;
  label: 0 | 1;
  /** Weight in fitting (each source and class carries the same total weight). */
  weight: number;
}

/** BIPIA's `context`: `SUBJECT: …|EMAIL_FROM: …|RECEIVED DATE: …|CONTENT: …`, or only the body. */
function parseBipiaContext(context: string): { subject: string; text: string } {
  const subject = /SUBJECT: ([^|]*)/.exec(context)?.[1]?.trim() ?? '';
  const content = /CONTENT: ([\s\S]*)$/.exec(context)?.[1] ?? context;
  return { subject, text: content };
}

/** Inserts `attack` at the start, middle (a sentence or line boundary near the middle) or end of `text`. */
function insertAttack(text: string, attack: string, position: 'start' | 'middle' | 'end'): string {
  if (position === 'start') return `${attack}\n${text}`;
  if (position === 'end') return `${text}\n${attack}`;
  const middle = Math.floor(text.length / 2);
  const boundary = text.slice(middle).search(/[.!?\n]\s/);
  const at = boundary === -1 ? middle : middle + boundary + 1;
  return `${text.slice(0, at)} ${attack} ${text.slice(at)}`;
}

function bipiaSplit(split: 'train' | 'test'): Example[] {
  const emails = readFileSync(join(BIPIA, `email_${split}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => parseBipiaContext((JSON.parse(line) as { context: string }).context));
  const attacks = Object.values(
    JSON.parse(readFileSync(join(BIPIA, `text_attack_${split}.json`), 'utf8')) as Record<string, string[]>,
  ).flat();
  const positions = ['start', 'middle', 'end'] as const;
  const negatives: Example[] = emails.map((email) => ({ input: { ...email, html: null }, label: 0, weight: 0 }));
  const positives: Example[] = [];
  for (const email of emails) {
    for (const attack of attacks) {
      for (const position of positions)
        positives.push({
          input: { subject: email.subject, text: insertAttack(email.text, attack, position), html: null },
          label: 1,
          weight: 0,
        });
    }
  }
  for (const example of negatives) example.weight = 0.5 / negatives.length;
  for (const example of positives) example.weight = 0.5 / positives.length;
  return [...negatives, ...positives];
}

interface LabelledMessage {
  label: 0 | 1;
  kind: string;
  subject: string;
  text: string;
  html?: string;
}

function ownSplit(split: 'train' | 'test'): Example[] {
  const file = JSON.parse(readFileSync(join(here, 'data', 'postbox-injection-set.json'), 'utf8')) as { messages: LabelledMessage[] };
  const chosen = file.messages.filter((_, index) => (index % 2 === 0) === (split === 'train'));
  const examples: Example[] = chosen.map((message) => ({
    input: { subject: message.subject, text: message.text, html: message.html ?? null },
    label: message.label,
    weight: 0,
  }));
  const negatives = examples.filter((example) => example.label === 0).length;
  const positives = examples.length - negatives;
  for (const example of examples) example.weight = example.label === 0 ? 0.5 / negatives : 0.5 / positives;
  return examples;
}

/** Area under the ROC curve (probability a random positive outscores a random negative; ties count half). */
function rocAuc(scores: number[], labels: number[]): number {
  const pairs = scores.map((score, index) => ({ score, label: labels[index] ?? 0 })).sort((a, b) => a.score - b.score);
  let rankSum = 0;
  let positives = 0;
  let index = 0;
  while (index < pairs.length) {
    let end = index;
    while (end + 1 < pairs.length && pairs[end + 1]?.score === pairs[index]?.score) end += 1;
    const rank = (index + end) / 2 + 1;
    for (let k = index; k <= end; k += 1) {
      if (pairs[k]?.label === 1) {
        rankSum += rank;
        positives += 1;
      }
    }
    index = end + 1;
  }
  const negatives = pairs.length - positives;
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

function metrics(scores: number[], labels: number[]) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  scores.forEach((score, index) => {
    const predicted = score >= THRESHOLD;
    const label = labels[index] === 1;
    if (predicted && label) tp += 1;
    else if (predicted) fp += 1;
    else if (label) fn += 1;
    else tn += 1;
  });
  return {
    auc: rocAuc(scores, labels),
    precision: tp + fp === 0 ? 0 : tp / (tp + fp),
    recall: tp + fn === 0 ? 0 : tp / (tp + fn),
    falseQuarantine: fp + tn === 0 ? 0 : fp / (fp + tn),
    positives: tp + fn,
    negatives: fp + tn,
  };
}

/**
 * Logistic regression by full-batch gradient descent (Adam) with an L2
 * penalty that pulls each weight towards the hand-set prior model (MAP with a
 * Gaussian prior: a feature the training data never exercises keeps its
 * prior weight) and weights kept non-negative (every feature is evidence
 * for an injection). Features are standardised inside; the model is returned
 * in raw feature scale.
 */
function fit(examples: Example[], l2: number, prior: LinearModel): LinearModel {
  const dimension = FEATURE_NAMES.length;
  const rows = examples.map((example) => injectionFeatures(example.input));
  const totalWeight = examples.reduce((sum, example) => sum + example.weight, 0);
  const mean = new Float64Array(dimension);
  const scale = new Float64Array(dimension);
  for (let j = 0; j < dimension; j += 1) {
    let m = 0;
    rows.forEach((row, i) => {
      m += (row[j] ?? 0) * (examples[i]?.weight ?? 0);
    });
    m /= totalWeight;
    let v = 0;
    rows.forEach((row, i) => {
      v += ((row[j] ?? 0) - m) ** 2 * (examples[i]?.weight ?? 0);
    });
    mean[j] = m;
    scale[j] = Math.sqrt(v / totalWeight) || 1;
  }
  const priorStd = prior.weights.map((value, j) => value * (scale[j] ?? 1));
  const w = Float64Array.from(priorStd);
  let b = 0;
  const mW = new Float64Array(dimension + 1);
  const vW = new Float64Array(dimension + 1);
  const rate = 0.05;
  for (let step = 1; step <= 4_000; step += 1) {
    const gradient = new Float64Array(dimension + 1);
    rows.forEach((row, i) => {
      const example = examples[i] as Example;
      let logit = b;
      for (let j = 0; j < dimension; j += 1) logit += (w[j] ?? 0) * (((row[j] ?? 0) - (mean[j] ?? 0)) / (scale[j] ?? 1));
      const error = (1 / (1 + Math.exp(-logit)) - example.label) * (example.weight / totalWeight);
      for (let j = 0; j < dimension; j += 1)
        gradient[j] = (gradient[j] ?? 0) + error * (((row[j] ?? 0) - (mean[j] ?? 0)) / (scale[j] ?? 1));
      gradient[dimension] = (gradient[dimension] ?? 0) + error;
    });
    for (let j = 0; j < dimension; j += 1) gradient[j] = (gradient[j] ?? 0) + l2 * ((w[j] ?? 0) - (priorStd[j] ?? 0));
    for (let j = 0; j <= dimension; j += 1) {
      const g = gradient[j] ?? 0;
      mW[j] = 0.9 * (mW[j] ?? 0) + 0.1 * g;
      vW[j] = 0.999 * (vW[j] ?? 0) + 0.001 * g * g;
      const update = (rate * ((mW[j] ?? 0) / (1 - 0.9 ** step))) / (Math.sqrt((vW[j] ?? 0) / (1 - 0.999 ** step)) + 1e-8);
      if (j === dimension) b -= update;
      else w[j] = Math.max(0, (w[j] ?? 0) - update);
    }
  }
  const weights = [...w].map((value, j) => value / (scale[j] ?? 1));
  const bias = b - weights.reduce((sum, value, j) => sum + value * (mean[j] ?? 0), 0);
  const round = (value: number) => Math.round(value * 1_000) / 1_000;
  return { id: 'local-v1', bias: round(bias), weights: weights.map(round) };
}

/** The baseline: 1 when an "ignore previous instructions"-style override phrase occurs, else 0. */
const OVERRIDE_ONLY =
  /\b(?:ignore|disregard|forget)\b[^.!?\n]{0,40}\b(?:previous|prior|above|earlier|all)\b[^.!?\n]{0,20}\b(?:instructions?|prompts?|rules)\b/i;
const baselineScore = (input: ScoringInput) => (OVERRIDE_ONLY.test(`${input.subject}\n${input.text}\n${input.html ?? ''}`) ? 1 : 0);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** Hand-set starting weights (the prior of the fit), in FEATURE_NAMES order. */
const PRIOR_MODEL: LinearModel = {
  id: 'prior',
  bias: -4,
  weights: [3, 3, 2.5, 2.5, 0.8, 0.8, 0.8, 1.2, 1.5, 0.6, 3, 0.5, 4, 0.3, 0.5, 1.5, 0.3, 0.8, 3, 2],
};

const fitting = process.argv.includes('--fit');
const trainSets = { bipia: bipiaSplit('train'), own: ownSplit('train') };
const testSets = { 'BIPIA e-mail (test split)': bipiaSplit('test'), 'agentinfra labelled set (test half)': ownSplit('test') };

let model = LOCAL_SCORER_MODEL;
if (fitting) {
  const training = [...trainSets.bipia, ...trainSets.own];
  // A false quarantine hides ordinary mail from the agent: count each ordinary message as NEGATIVE_COST missed injections.
  const negativeCost = Number(process.env.NEGATIVE_COST ?? 3);
  for (const example of training) if (example.label === 0) example.weight *= negativeCost;
  model = fit(training, Number(process.env.L2 ?? 0.02), PRIOR_MODEL);
  console.log('Fitted model (paste into packages/module-postbox/src/scoring/feature-weights.ts):');
  console.log(JSON.stringify(model));
  console.log();
  console.log('| feature | weight |\n|---|---:|');
  FEATURE_NAMES.forEach((name, j) => {
    console.log(`| ${name} | ${model.weights[j]} |`);
  });
  console.log();
}
const scorer = createLocalInjectionScorer({ model });

const fmt = (value: number) => value.toFixed(3);
console.log(`## Injection scorer (${model.id}), threshold ${THRESHOLD}\n`);
console.log('| set | scorer | messages (inj/ordinary) | ROC-AUC | precision | recall | false-quarantine rate |');
console.log('|---|---|---|---:|---:|---:|---:|');
const report = (name: string, examples: Example[]) => {
  const labels = examples.map((example) => example.label);
  const local = metrics(
    examples.map((example) => scorer.scoreSync(example.input)),
    labels,
  );
  const baseline = metrics(
    examples.map((example) => baselineScore(example.input)),
    labels,
  );
  for (const [label, m] of [
    ['local scorer', local],
    ['baseline: override phrases only', baseline],
  ] as const) {
    console.log(
      `| ${name} | ${label} | ${m.positives}/${m.negatives} | ${fmt(m.auc)} | ${fmt(m.precision)} | ${fmt(m.recall)} | ${fmt(m.falseQuarantine)} |`,
    );
  }
  if (process.argv.includes('--errors')) {
    examples.forEach((example) => {
      const score = scorer.scoreSync(example.input);
      if (score >= THRESHOLD !== (example.label === 1) && examples.length < 1_000) {
        console.log(`|  | miss: label ${example.label}, score ${score.toFixed(3)}: ${example.input.subject.slice(0, 60)} |  |  |  |  |  |`);
      }
    });
  }
  return { local, baseline };
};
const results = Object.entries(testSets).map(([name, examples]) => ({ name, ...report(name, examples) }));
console.log();
for (const [name, examples] of Object.entries({ 'BIPIA train': trainSets.bipia, 'labelled set train half': trainSets.own })) {
  const m = metrics(
    examples.map((example) => scorer.scoreSync(example.input)),
    examples.map((example) => example.label),
  );
  console.log(`(training fit, ${name}: ROC-AUC ${fmt(m.auc)}, recall ${fmt(m.recall)}, false-quarantine ${fmt(m.falseQuarantine)})`);
}

// Scoring time per message: every test message, plus 20 KB multipart messages (text + HTML), after a warm-up.
const paragraph = 'Thanks for your order. Your items will ship within two business days and you will get a tracking link. ';
const big: ScoringInput = {
  subject: 'Your order confirmation #88231',
  text: paragraph.repeat(Math.ceil(10_000 / paragraph.length)).slice(0, 10_000),
  html: `<html><body>${`<p style="margin:0 0 12px">${paragraph}</p>`.repeat(Math.ceil(10_000 / 140))}</body></html>`.slice(0, 10_000),
};
const timed = [
  ...Object.values(testSets)
    .flat()
    .map((example) => example.input),
  ...Array.from({ length: 2_000 }, () => big),
];
for (const input of timed.slice(0, 2_000)) scorer.scoreSync(input);
/**
 * Wall time and CPU time (process.cpuUsage, µs resolution) of each call: on a
 * shared 2-core machine the wall-clock p99 also counts the time the process
 * waited for a core; CPU time is what scoring itself costs.
 */
function timeEach(inputs: ScoringInput[]) {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (const input of inputs) {
    const cpuStart = process.cpuUsage();
    const started = performance.now();
    scorer.scoreSync(input);
    wall.push(performance.now() - started);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1000);
  }
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { wall, cpu };
}
const all = timeEach(timed);
const large = timeEach(Array.from({ length: 2_000 }, () => big));
console.log();
console.log('| scoring time per message | wall p50 ms | wall p99 ms | CPU p50 ms | CPU p99 ms |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, t] of [
  [`all test messages + 2 000 × 20 KB (${timed.length})`, all],
  ['20 KB text+HTML message (2 000)', large],
] as const) {
  console.log(
    `| ${name} | ${percentile(t.wall, 50).toFixed(3)} | ${percentile(t.wall, 99).toFixed(3)} | ${percentile(t.cpu, 50).toFixed(3)} | ${percentile(t.cpu, 99).toFixed(3)} |`,
  );
}
const bipia = results[0];
if (bipia) {
  console.log();
  console.log(
    `Ratio vs baseline on BIPIA test: ROC-AUC ${fmt(bipia.local.auc)} vs ${fmt(bipia.baseline.auc)} (${(bipia.local.auc / bipia.baseline.auc).toFixed(2)}×).`,
  );
}
