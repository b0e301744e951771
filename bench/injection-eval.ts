/**
 * Quality and cost of the agent-postbox local injection scorer (issue #17),
 * against the previous scorer (`local-v1`) measured in the same run.
 *
 *   pnpm bench injection-eval        (about a minute; needs ../shared/datasets/bipia or AGENTINFRA_BIPIA_DIR)
 *
 * The model is trained by `pnpm --filter @agentinfra/module-postbox build:injection-model`
 * on training data only; this benchmark only reads the test data:
 * - BIPIA e-mail test: email_test × text_attack_test, each attack at the
 *   start, middle and end of each e-mail (label 1), each e-mail alone (label 0);
 *   the test attack categories never occur in training.
 * - the held-out half of bench/data/postbox-injection-set.json (seeded split,
 *   `packages/module-postbox/src/build/injection-data.ts`).
 * Prints, per set and scorer: ROC-AUC, and recall / false-quarantine rate /
 * precision at the default threshold 0.5; the ROC points of the current
 * scorer at a range of thresholds (for choosing `postbox_quarantine_threshold`);
 * the time to load the model; and the time to score three 20 KB messages
 * (text + HTML, short sentences, the first set's ordinary e-mails joined;
 * wall and CPU, p50/p99), with the ratio to local-v1.
 *
 * `INJECTION_EVAL_PREVIOUS=<path of a local-scorer.ts>` also scores a
 * snapshot of an earlier scorer in the same run (a copy of its
 * `src/scoring/` beside its `data/injection-model.json`, with a
 * `node_modules` link for its imports): its quality rows and its scoring
 * time are printed next to the current one's.
 */
import { readFileSync } from 'node:fs';
import { operatingPoint, rocAuc, rocPoints, type ScoredLabel } from '../packages/module-postbox/src/build/classifier-metrics.js';
import {
  bipiaAvailable,
  bipiaDirectory,
  bipiaLabelled,
  type LabelledMail,
  splitLabelledSet,
} from '../packages/module-postbox/src/build/injection-data.js';
import { decodeInjectionModel, defaultModelFile } from '../packages/module-postbox/src/scoring/injection-model.js';
import type { ScoringInput } from '../packages/module-postbox/src/scoring/injection-scorer.js';
import { createLocalInjectionScorer } from '../packages/module-postbox/src/scoring/local-scorer.js';
import { scoreV1 } from './support/injection-scorer-v1.js';
import { percentiles } from './support/latency-percentiles.js';

const THRESHOLD = 0.5;
const ROC_THRESHOLDS = [0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98];

const scorer = createLocalInjectionScorer();
const previousPath = process.env.INJECTION_EVAL_PREVIOUS;
const previous = previousPath
  ? ((await import(previousPath)) as { createLocalInjectionScorer: typeof createLocalInjectionScorer }).createLocalInjectionScorer()
  : null;
const scorers: ReadonlyArray<readonly [string, (input: ScoringInput) => number]> = [
  [`${scorer.id} (this version)`, (input) => scorer.scoreSync(input)],
  ...(previous ? [[`${previous.id} (snapshot)`, (input: ScoringInput) => previous.scoreSync(input)] as const] : []),
  ['local-v1', scoreV1],
];

const sets: Array<[string, LabelledMail[]]> = [];
if (bipiaAvailable()) sets.push(['BIPIA e-mail test', bipiaLabelled('test')]);
else process.stdout.write(`(BIPIA not found at ${bipiaDirectory()}: set AGENTINFRA_BIPIA_DIR; BIPIA rows skipped)\n\n`);
sets.push(['labelled set, held-out half', splitLabelledSet().heldOut]);

const fmt = (value: number) => value.toFixed(3);
const current: Array<[string, ScoredLabel[]]> = [];
process.stdout.write(`### Quality at threshold ${THRESHOLD}\n\n`);
process.stdout.write(
  '| set | scorer | injections / ordinary | ROC-AUC | recall | false-quarantine | precision |\n|---|---|---|---:|---:|---:|---:|\n',
);
for (const [name, mails] of sets) {
  for (const [index, [label, score]] of scorers.entries()) {
    const scored = mails.map((mail): ScoredLabel => ({ score: score(mail.input), label: mail.label }));
    if (index === 0) current.push([name, scored]);
    const at = operatingPoint(scored, THRESHOLD);
    process.stdout.write(
      `| ${name} | ${label} | ${at.injections} / ${at.ordinary} | ${fmt(rocAuc(scored))} | ${fmt(at.recall)} | ${fmt(at.falseQuarantine)} | ${fmt(at.precision)} |\n`,
    );
  }
}

process.stdout.write(`\n### ROC points of ${scorer.id} (quarantined when score ≥ threshold)\n\n`);
process.stdout.write(`| threshold | ${current.map(([name]) => `${name}: recall | false-quarantine`).join(' | ')} |\n`);
process.stdout.write(`|---:|${current.map(() => '---:|---:').join('|')}|\n`);
const curves = current.map(([, scored]) => rocPoints(scored, ROC_THRESHOLDS));
ROC_THRESHOLDS.slice()
  .sort((a, b) => b - a)
  .forEach((threshold, row) => {
    const cells = curves.map((curve) => `${fmt(curve[row]?.recall ?? 0)} | ${fmt(curve[row]?.falseQuarantine ?? 0)}`);
    process.stdout.write(`| ${threshold} | ${cells.join(' | ')} |\n`);
  });

const heldOutErrors = current.find(([name]) => name.startsWith('labelled'))?.[1] ?? [];
const heldOutMails = splitLabelledSet().heldOut;
const misses = heldOutMails.filter((mail, index) => (heldOutErrors[index]?.score ?? 0) >= THRESHOLD !== (mail.label === 1));
if (misses.length > 0) {
  process.stdout.write(`\nHeld-out errors at ${THRESHOLD}: `);
  process.stdout.write(
    misses.map((mail) => `${mail.label === 1 ? 'missed' : 'false quarantine'} "${mail.input.subject}" (${mail.kind})`).join('; '),
  );
  process.stdout.write('\n');
}

// Model load: read + parse + decode the bundled file, in this (warm) process.
const loads: number[] = [];
for (let i = 0; i < 20; i += 1) {
  const started = performance.now();
  decodeInjectionModel(JSON.parse(readFileSync(defaultModelFile(), 'utf8')));
  loads.push(performance.now() - started);
}
loads.sort((a, b) => a - b);

// Scoring time: a 20 KB text+HTML message, a 20 KB text of short sentences and 20 KB of ordinary mail, after a warm-up.
const paragraph = 'Thanks for your order. Your items will ship within two business days and you will get a tracking link. ';
const multipart: ScoringInput = {
  subject: 'Your order confirmation #88231',
  text: paragraph.repeat(Math.ceil(10_000 / paragraph.length)).slice(0, 10_000),
  html: `<html><body>${`<p style="margin:0 0 12px">${paragraph}</p>`.repeat(Math.ceil(10_000 / 140))}</body></html>`.slice(0, 10_000),
};
const sentences: ScoringInput = {
  subject: 'Notes',
  text: Array.from({ length: 2_000 }, (_, i) => `Item ${i}: ok?`)
    .join('\n')
    .slice(0, 20_000),
  html: null,
};
/** 20 KB of real ordinary mail: the ordinary e-mails of the first set (BIPIA's test e-mails when present), joined by blank lines. */
const [ordinarySource, ordinarySet] = sets[0] ?? ['', []];
const ordinaryText = ordinarySet
  .filter((mail) => mail.label === 0)
  .map((mail) => mail.input.text)
  .join('\n\n');
const ordinary: ScoringInput = {
  subject: 'Fwd: this week',
  text: ordinaryText.repeat(Math.ceil(20_000 / Math.max(1, ordinaryText.length))).slice(0, 20_000),
  html: null,
};
function timeEach(score: (input: ScoringInput) => number, input: ScoringInput, runs: number) {
  for (let i = 0; i < 200; i += 1) score(input);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const cpuStart = process.cpuUsage();
    const started = performance.now();
    score(input);
    wall.push(performance.now() - started);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1000);
  }
  return { wall, cpu };
}
process.stdout.write(
  `\n### Cost\n\nModel file ${defaultModelFile().split('/').slice(-2).join('/')}: ${readFileSync(defaultModelFile()).length} bytes; ` +
    `load (read + parse + decode) p50 ${percentiles(loads).p50.toFixed(2)} ms, max ${(loads.at(-1) ?? 0).toFixed(2)} ms (20 loads; the first in a process pays JIT warm-up too).\n\n`,
);
process.stdout.write(
  '| scoring time per message (2 000 runs) | scorer | wall p50 ms | wall p99 ms | CPU p50 ms | CPU p99 ms | ratio (p50 wall) |\n',
);
process.stdout.write('|---|---|---:|---:|---:|---:|---:|\n');
for (const [name, input] of [
  ['20 KB text + HTML', multipart],
  ['20 KB of short sentences', sentences],
  [`20 KB of ordinary mail (${ordinarySource})`, ordinary],
] as const) {
  const baseline = timeEach(scoreV1, input, 2_000);
  const now = timeEach((value) => scorer.scoreSync(value), input, 2_000);
  const rows: Array<readonly [string, ReturnType<typeof timeEach>]> = [[scorer.id, now]];
  if (previous) rows.push([`${previous.id} (snapshot)`, timeEach((value) => previous.scoreSync(value), input, 2_000)]);
  rows.push(['local-v1 (baseline)', baseline]);
  for (const [label, t] of rows) {
    const wall = percentiles(t.wall);
    const cpu = percentiles(t.cpu);
    process.stdout.write(
      `| ${name} | ${label} | ${wall.p50.toFixed(3)} | ${wall.p99.toFixed(3)} | ${cpu.p50.toFixed(3)} | ${cpu.p99.toFixed(3)} | ${(wall.p50 / percentiles(baseline.wall).p50).toFixed(2)} |\n`,
    );
  }
}
