import { IntBuffer } from './growable-buffers.js';
import { PHRASE_FAMILIES, type PhraseMatch } from './instruction-phrasing.js';
import { segmentBucketSet } from './segment-bucket-set.js';
import { noveltyCounter, noveltyFeatures } from './segment-novelty.js';
import { placeFeatures } from './segment-place.js';
import { TOPIC_MAX_SEGMENTS, type TopicTable, topicCounter } from './segment-topics.js';
import {
  forEachNgram,
  MAX_SEGMENT_WORDS,
  NGRAM_KIND,
  type NgramVisitor,
  namedFeatureHash,
  type SegmentVisitor,
  scoredPosition,
  scoredText,
} from './text-ngrams.js';

/** The kind of a word unigram, read once (under tsx, as the benchmarks run, each read of an imported binding is a getter call). */
const WORD_KIND = NGRAM_KIND.word;

/** Hash of the cue feature of each phrase family (`cue:<family>`), in {@link PHRASE_FAMILIES} order. */
const CUE_HASHES = PHRASE_FAMILIES.map(([name]) => namedFeatureHash(`cue:${name}`));

/** Distinct buckets a segment can have: per word its unigram, stem and bigram (or `first`), its `end`, and one cue per phrase family. */
const SEGMENT_BUCKETS_MAX = 3 * MAX_SEGMENT_WORDS + 1 + PHRASE_FAMILIES.length;

/** Receives the features of a text, segment by segment, then the novelty features of each segment. */
export interface SegmentSink {
  /** A feature bucket of the current segment, each bucket once per segment. */
  feature(bucket: number): void;
  /** The current segment ended; its span in `text` (the scored text of the last {@link SegmentReader} call). */
  end(start: number, end: number, text: string): void;
  /** After the last segment of the text: a novelty feature bucket of segment `index` (0 = the text's first segment). */
  late(index: number, bucket: number): void;
}

/**
 * Reads the segment features of one text: prepares it with `scoredText`,
 * then, per segment, its distinct n-gram buckets, one `cue` bucket per
 * instruction phrase family found in it (a phrase belongs to the segment
 * in which its last character lies, or to the segment after the gap it
 * lies in), its novelty buckets (`segment-novelty.ts`: how many of its
 * words the rest of the text does not use) and, when an instruction phrase
 * ends in the first segment after the text's first line or in its last
 * segment, a place bucket (`segment-place.ts`), and, with a topic table,
 * its topic buckets (`segment-topics.ts`: how far its topic is from the rest
 * of the text). `matches` are the phrases found in the whole (uncut) `text`.
 * `ends` says whether `text` holds the start and the end of the text it was
 * taken from (both unless given): a window of a longer text that does not
 * start it gets no `first` place bucket, one that does not end it no `last`.
 * Returns whether every word of `text` was read (not cut by `scoredText` or
 * the word bound).
 */
export type SegmentReader = (text: string, matches: readonly PhraseMatch[], sink: SegmentSink, ends?: TextEnds) => boolean;

/** Whether a text read holds the start and the end of the text it was taken from (see {@link SegmentReader}). */
export interface TextEnds {
  start: boolean;
  end: boolean;
}

const WHOLE_TEXT: TextEnds = { start: true, end: true };

/** An instruction phrase of the text being read: its family and where it ends in the scored text. */
interface PhrasePosition {
  family: number;
  at: number;
}
const NO_POSITIONS: readonly PhrasePosition[] = [];
/** The sink a reader holds between reads, so that it keeps no caller's sink alive. */
const NO_SINK: SegmentSink = { feature: () => undefined, end: () => undefined, late: () => undefined };

/**
 * A {@link SegmentReader} for a table of `2^hashBits` buckets. It keeps a
 * {@link segmentBucketSet} to count each bucket once per segment, a
 * {@link noveltyCounter} and a topic counter, so one reader serves one
 * caller at a time (calls are synchronous).
 * @param topics the model's word topic vectors; `null`: no topic features.
 */
export function createSegmentReader(hashBits: number, topics: TopicTable | null): SegmentReader {
  const mask = 2 ** hashBits - 1;
  const seen = segmentBucketSet(SEGMENT_BUCKETS_MAX);
  const novelty = noveltyCounter(hashBits);
  const topic = topics === null ? null : topicCounter(topics, mask);
  const noveltyBuckets = noveltyFeatures(mask);
  const placeBuckets = placeFeatures(mask);
  /** Per segment of the current text: 1 when an instruction phrase ends in it. */
  const cuedSegments = new IntBuffer();
  // The state of the text being read, which the two visitors below share. They are made once, so that
  // forEachNgram calls the same functions on every text (closures made per read inline less well).
  let sink = NO_SINK;
  let scored = '';
  let positions: readonly PhrasePosition[] = NO_POSITIONS;
  let cue = 0;
  let cued = false;
  let firstLine = -1;
  let firstBody = -1;
  // The topic counter reads only the first TOPIC_MAX_SEGMENTS segments: later ones are not handed to it
  // (the segment being read is number `cuedSegments.length`), which spares a call per word of a long text.
  const visitNgram: NgramVisitor = (hash, kind, start, end) => {
    const bucket = hash & mask;
    if (!seen.add(bucket)) return;
    sink.feature(bucket);
    if (kind === WORD_KIND) {
      novelty.word(bucket, end - start);
      if (topic !== null && cuedSegments.length < TOPIC_MAX_SEGMENTS) topic.word(hash);
    }
  };
  const endSegment: SegmentVisitor = (start, end, next) => {
    while (cue < positions.length && (positions[cue]?.at ?? 0) < next) {
      const bucket = (CUE_HASHES[positions[cue]?.family ?? 0] ?? 0) & mask;
      cue += 1;
      cued = true;
      if (seen.add(bucket)) sink.feature(bucket);
    }
    if (firstBody === -1 && firstLine !== -1 && start > firstLine) firstBody = cuedSegments.length;
    cuedSegments.push(cued ? 1 : 0);
    cued = false;
    novelty.endSegment();
    if (topic !== null && cuedSegments.length <= TOPIC_MAX_SEGMENTS) topic.endSegment();
    sink.end(start, end, scored);
    seen.clear();
  };
  return (text, matches, textSink, ends = WHOLE_TEXT) => {
    scored = scoredText(text);
    const found: PhrasePosition[] = [];
    for (const match of matches) {
      const at = scoredPosition(match.at, text.length);
      if (at !== -1) found.push({ family: match.family, at });
    }
    positions = found;
    sink = textSink;
    cue = 0;
    cued = false;
    cuedSegments.length = 0;
    novelty.reset();
    topic?.reset();
    firstLine = ends.start ? scored.indexOf('\n') : -1;
    firstBody = -1;
    seen.clear();
    const readAll = forEachNgram(scored, visitNgram, endSegment) && scored === text;
    // Hold on to neither the caller's sink nor the text between reads.
    sink = NO_SINK;
    scored = '';
    positions = NO_POSITIONS;
    const segmentCount = cuedSegments.length;
    const last = ends.end ? segmentCount - 1 : -1;
    for (let k = 0; k < segmentCount; k += 1) {
      const segmentCued = cuedSegments.values[k] === 1;
      const extra = noveltyBuckets(novelty.share(k), segmentCount, segmentCued);
      for (let e = 0; e < extra.length; e += 1) textSink.late(k, extra[e] ?? 0);
      if (segmentCued && (k === firstBody || k === last)) {
        const place = placeBuckets(k === firstBody ? 'first' : 'last', true);
        for (let e = 0; e < place.length; e += 1) textSink.late(k, place[e] ?? 0);
      }
      if (topic === null || k >= TOPIC_MAX_SEGMENTS) continue;
      const topical = topic.features(k, segmentCued);
      for (let e = 0; e < topical.length; e += 1) textSink.late(k, topical[e] ?? 0);
    }
    return readAll;
  };
}

/** The distinct feature buckets of each segment of the texts (what the scorer sums per segment), for training. */
export function segmentBuckets(
  reader: SegmentReader,
  parts: ReadonlyArray<{ text: string; matches: readonly PhraseMatch[] }>,
): Int32Array[] {
  const segments: number[][] = [];
  let current: number[] = [];
  let base = 0;
  const sink: SegmentSink = {
    feature: (bucket) => current.push(bucket),
    end: () => {
      segments.push(current);
      current = [];
    },
    late: (index, bucket) => segments[base + index]?.push(bucket),
  };
  for (const part of parts) {
    base = segments.length;
    if (part.text) reader(part.text, part.matches, sink);
  }
  return segments.map((buckets) => Int32Array.from(buckets));
}
