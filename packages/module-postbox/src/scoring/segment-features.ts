import { PHRASE_FAMILIES, type PhraseMatch } from './instruction-phrasing.js';
import { forEachNgram, NGRAM_KIND, type NgramKind, namedFeatureHash, scoredPosition, scoredText } from './text-ngrams.js';

/** Hash of the cue feature of each phrase family (`cue:<family>`), in {@link PHRASE_FAMILIES} order. */
const CUE_HASHES = PHRASE_FAMILIES.map(([name]) => namedFeatureHash(`cue:${name}`));

/** Receives the features of a text, segment by segment. */
export interface SegmentSink {
  /** A feature bucket of the current segment, each bucket once per segment; `start`/`end` is the span it came from. */
  feature(bucket: number, kind: NgramKind, start: number, end: number): void;
  /** The current segment ended; its span in `text` (the scored text of the last {@link SegmentReader} call). */
  end(start: number, end: number, text: string): void;
}

/**
 * Reads the segment features of one text: prepares it with `scoredText`,
 * then, per segment, its distinct n-gram buckets and one `cue` bucket per
 * instruction phrase family found in it (a phrase belongs to the segment
 * in which its last character lies, or to the segment after the gap it
 * lies in). `matches` are the phrases found in the whole (uncut) `text`.
 */
export type SegmentReader = (text: string, matches: readonly PhraseMatch[], sink: SegmentSink) => void;

/**
 * A {@link SegmentReader} for a table of `2^hashBits` buckets. It keeps one
 * stamp per bucket (4 bytes each) to count each bucket once per segment, so
 * one reader serves one caller at a time (calls are synchronous).
 */
export function createSegmentReader(hashBits: number): SegmentReader {
  const mask = 2 ** hashBits - 1;
  const seen = new Uint32Array(mask + 1);
  let stamp = 1;
  const nextStamp = () => {
    stamp += 1;
    if (stamp === 0xffffffff) {
      seen.fill(0);
      stamp = 1;
    }
  };
  return (text, matches, sink) => {
    const scored = scoredText(text);
    const positions: Array<{ family: number; at: number }> = [];
    for (const match of matches) {
      const at = scoredPosition(match.at, text.length);
      if (at !== -1) positions.push({ family: match.family, at });
    }
    let cue = 0;
    nextStamp();
    forEachNgram(
      scored,
      (hash, kind, start, end) => {
        const bucket = hash & mask;
        if (seen[bucket] === stamp) return;
        seen[bucket] = stamp;
        sink.feature(bucket, kind, start, end);
      },
      (start, end, next) => {
        while (cue < positions.length && (positions[cue]?.at ?? 0) < next) {
          const bucket = (CUE_HASHES[positions[cue]?.family ?? 0] ?? 0) & mask;
          cue += 1;
          if (seen[bucket] === stamp) continue;
          seen[bucket] = stamp;
          sink.feature(bucket, NGRAM_KIND.cue, start, end);
        }
        sink.end(start, end, scored);
        nextStamp();
      },
    );
  };
}

/** The distinct feature buckets of each segment of the texts (what the scorer sums per segment), for training. */
export function segmentBuckets(
  reader: SegmentReader,
  parts: ReadonlyArray<{ text: string; matches: readonly PhraseMatch[] }>,
): Int32Array[] {
  const segments: Int32Array[] = [];
  let current: number[] = [];
  const sink: SegmentSink = {
    feature: (bucket) => current.push(bucket),
    end: () => {
      segments.push(Int32Array.from(current));
      current = [];
    },
  };
  for (const part of parts) if (part.text) reader(part.text, part.matches, sink);
  return segments;
}
