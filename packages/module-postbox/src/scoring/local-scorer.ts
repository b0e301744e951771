import { boundedScoringInput } from './bounded-input.js';
import { FloatBuffer, IntBuffer } from './growable-buffers.js';
import {
  FEATURE_NAMES,
  type FeatureName,
  injectionFeatures,
  MAX_WHOLE_HIDDEN,
  type MessageFeatures,
  type MessageText,
  readFeatures,
  wholeMessageText,
} from './injection-features.js';
import { bundledInjectionModel, type InjectionModel } from './injection-model.js';
import type { InjectionScorer, ScoringInput } from './injection-scorer.js';
import { hasWeight, nonzeroBuckets } from './nonzero-buckets.js';
import { createSegmentReader, type SegmentSink, type TextEnds } from './segment-features.js';
import { headAndTail, readWindows } from './text-ngrams.js';

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

/** One read of a message (see `explain`): its logit, its explanation, and whether its visible and hidden text were read whole. */
interface Read {
  logit: number;
  explanation: InjectionExplanation;
  visibleWhole: boolean;
  hiddenWhole: boolean;
}

/** Where the segments of a message are: per segment `[start, end)` in the scored text of its part (visible, then hidden). */
interface SegmentSpans {
  starts: IntBuffer;
  ends: IntBuffer;
  /** Index of the first segment of the hidden text (the number of segments when there is none). */
  hiddenFrom: number;
  /** The scored visible and hidden text. */
  visible: string;
  hidden: string;
}

/**
 * The highest segment score (−∞ without segments) and up to {@link EVIDENCE_MAX}
 * segments scoring at least {@link EVIDENCE_MIN}, strongest first (ties: earlier first).
 */
function strongestSegments(sums: FloatBuffer, spans: SegmentSpans) {
  let best = Number.NEGATIVE_INFINITY;
  const evidence: Array<{ text: string; weight: number }> = [];
  for (let index = 0; index < sums.length; index += 1) {
    const weight = sums.values[index] ?? 0;
    if (weight > best) best = weight;
    if (weight < EVIDENCE_MIN) continue;
    const last = evidence[EVIDENCE_MAX - 1];
    if (last && weight <= last.weight) continue;
    const start = spans.starts.values[index] ?? 0;
    const end = Math.min(spans.ends.values[index] ?? 0, start + EVIDENCE_TEXT_MAX);
    evidence.push({ text: (index < spans.hiddenFrom ? spans.visible : spans.hidden).slice(start, end), weight });
    evidence.sort((a, b) => b.weight - a.weight);
    if (evidence.length > EVIDENCE_MAX) evidence.length = EVIDENCE_MAX;
  }
  return { best, evidence };
}

/**
 * The default {@link InjectionScorer}: runs in-process with no network and
 * no download. A logistic model (`local-v6`, `data/injection-model.json`,
 * trained by `src/build/train-injection-model-cli.ts` on training data only):
 *
 *   logit = bias + Σ signal weight · signal + max over sentences of (Σ weights of the sentence's features)
 *
 * - signals: the hand-written message features of `injection-features.ts`
 *   (instruction-override phrasing, model/role impersonation, chat-template
 *   markers, directions about the model's output, prompt-style tasks and
 *   questions, encodings, tool/command and exfiltration requests, lures,
 *   claims of delegated authority, hidden HTML, comments, zero-width and
 *   Unicode tag characters, base64/hex payloads, link tricks; override,
 *   model-address and output-direction phrasing in seven other languages);
 * - sentence features (`segment-features.ts`): hashed word unigrams,
 *   bigrams, 5-letter word stems, the sentence's first word and final
 *   punctuation, which instruction phrase families occur in it, and how
 *   many of its words the rest of the text never uses (`segment-novelty.ts`),
 *   whether an instruction phrase ends in it while it is the first
 *   sentence of the body or the last of the text (`segment-place.ts`), and
 *   how far its topic (the model's word topic vectors) is from the rest of
 *   the text (`segment-topics.ts`), each counted once per sentence;
 *   sentences of the visible and of the hidden text.
 *
 * The sentence that reads most like an instruction decides, so an
 * instruction inserted into a long ordinary mail is not diluted by it.
 *
 * One read covers, per text (visible, hidden), at most 16 000 + 8 000
 * characters and 6 000 words through the n-grams and the first 256
 * sentences through the topics, and the phrase and hidden-content checks
 * cover the first 92 000 + last 8 000 characters of the text and of the
 * HTML's shown text (192 000 + 8 000 of the HTML). A message that one read
 * covers is scored by that read alone. A longer one (up to the 1 MiB of
 * `bounded-input.ts`) is also read whole, in windows (`readWindows`: each
 * what one read covers, cut where sentences start, overlapping by up to
 * 2 000 characters): window k of the visible text and window k of the
 * hidden text make read k, with the message's hiding and link counts, and
 * the read with the highest logit gives the score, signals and evidence.
 * The first read still counts, so no message scores lower than it did
 * with the first read alone. The work is linear in the message's length
 * (about 60 ms for 1 MiB of text, bench/RESULTS.md).
 * @param options.model another model instead of the bundled one.
 * @throws Error when the bundled model file is missing or invalid.
 */
export function createLocalInjectionScorer(options: { model?: InjectionModel } = {}): LocalInjectionScorer {
  const model = options.model ?? bundledInjectionModel();
  const weights = model.ngramWeights;
  /** The buckets with a weight: adding a zero would not change a sum, which starts at +0 (never −0). */
  const weighted = nonzeroBuckets(weights);
  const read = createSegmentReader(model.hashBits, model.topics);
  /** Per segment of the message being explained: its n-gram score and its span (reused between calls). */
  const sums = new FloatBuffer();
  /**
   * The n-gram score of the segment being read, in a typed slot: a double
   * kept in a variable that the sink's closures update would be boxed anew
   * on every feature (a heap allocation per n-gram).
   */
  const running = new Float64Array(1);
  const spans: SegmentSpans = { starts: new IntBuffer(), ends: new IntBuffer(), hiddenFrom: 0, visible: '', hidden: '' };

  /** Index in `sums` of the first segment of the text being read, and whether it is the hidden text. */
  let base = 0;
  let inHidden = false;
  /**
   * Receives the segments of both texts of every read: made once, so that the
   * reader calls the same functions on every message (a sink made per read was
   * a new closure each time, which the JIT inlines less well).
   */
  const sink: SegmentSink = {
    feature: (bucket) => {
      if (hasWeight(weighted, bucket)) running[0] = (running[0] ?? 0) + (weights[bucket] ?? 0);
    },
    end: (start, end, text) => {
      sums.push(running[0] ?? 0);
      spans.starts.push(start);
      spans.ends.push(end);
      if (inHidden) spans.hidden = text;
      else spans.visible = text;
      running[0] = 0;
    },
    late: (index, bucket) => {
      sums.values[base + index] = (sums.values[base + index] ?? 0) + (weights[bucket] ?? 0);
    },
  };

  /** One read of a message: its logit, its explanation, and whether the visible and the hidden text were read whole. */
  const explainRead = (features: MessageFeatures, visibleEnds?: TextEnds, hiddenEnds?: TextEnds): Read => {
    let logit = model.bias;
    const fired: Array<{ name: FeatureName; weight: number }> = [];
    FEATURE_NAMES.forEach((name, index) => {
      const contribution = (model.signalWeights[index] ?? 0) * (features.signals[index] ?? 0);
      logit += contribution;
      if (contribution >= SIGNAL_REPORT_MIN) fired.push({ name, weight: contribution });
    });

    sums.length = 0;
    spans.starts.length = 0;
    spans.ends.length = 0;
    spans.visible = '';
    spans.hidden = '';
    running[0] = 0;
    base = 0;
    inHidden = false;
    const visibleWhole = read(features.visibleText, features.visibleMatches, sink, visibleEnds);
    base = sums.length;
    spans.hiddenFrom = base;
    inHidden = true;
    const hiddenWhole = features.hiddenText ? read(features.hiddenText, features.hiddenMatches, sink, hiddenEnds) : true;
    const { best, evidence } = strongestSegments(sums, spans);
    if (best !== Number.NEGATIVE_INFINITY) logit += best;

    fired.sort((a, b) => b.weight - a.weight);
    return {
      logit,
      visibleWhole,
      hiddenWhole,
      explanation: {
        score: Math.round(sigmoid(logit) * 10_000) / 10_000,
        signals: fired.map((item) => item.name),
        evidence: evidence.map((item) => ({ text: item.text, weight: Math.round(item.weight * 100) / 100 })),
      },
    };
  };

  const explain = (input: ScoringInput): InjectionExplanation => {
    const features = injectionFeatures(input);
    const first = explainRead(features);
    if (!features.cut && first.visibleWhole && first.hiddenWhole) return first.explanation;
    // Longer than one read: read all of it too, in windows, and keep the read that scored highest.
    const whole: MessageText = features.cut ? wholeMessageText(boundedScoringInput(input)) : features;
    const hiddenText = headAndTail(whole.hiddenText, MAX_WHOLE_HIDDEN);
    const visibleWindows = features.cut || !first.visibleWhole ? readWindows(whole.visibleText) : [];
    const hiddenWindows = hiddenText && (features.cut || !first.hiddenWhole) ? readWindows(hiddenText) : [];
    let highest = first;
    for (let k = 0; k < visibleWindows.length || k < hiddenWindows.length; k += 2) {
      const window = (text: string, windows: number[]) => {
        const start = windows[k] ?? text.length;
        const end = windows[k + 1] ?? text.length;
        return { text: text.slice(start, end), ends: { start: start === 0, end: end === text.length } };
      };
      const visible = window(whole.visibleText, visibleWindows);
      const hidden = window(hiddenText, hiddenWindows);
      const next = explainRead(readFeatures(visible.text, hidden.text, whole.hiding), visible.ends, hidden.ends);
      if (next.logit > highest.logit) highest = next;
    }
    return highest.explanation;
  };
  const scoreSync = (input: ScoringInput): number => explain(input).score;
  return {
    id: model.id,
    scoreSync,
    explain,
    score: async (input) => scoreSync(input),
  };
}
