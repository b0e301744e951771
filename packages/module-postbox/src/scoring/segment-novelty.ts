import { IntBuffer } from './growable-buffers.js';
import { namedFeatureHash } from './text-ngrams.js';

/**
 * How new a segment's words are to the rest of its text: an instruction
 * slipped into a mail tends to be about something the mail never mentions.
 * The share of a segment's distinct words of {@link NOVELTY_MIN_WORD_LENGTH}
 * or more characters that no other segment of the text uses becomes one of
 * {@link NOVELTY_BINS} `novel:<bin>` features, and `novel:<bin>:few` or
 * `novel:<bin>:many` for texts of at most or more than
 * {@link NOVELTY_FEW_SEGMENTS} segments (in a short text every sentence is new),
 * and `novel:<bin>:cued` when an instruction phrase (`instruction-phrasing.ts`)
 * ends in the segment.
 */

/** Words shorter than this are not counted (function words). */
export const NOVELTY_MIN_WORD_LENGTH = 4;
/** Segments with fewer counted words get no novelty feature. */
export const NOVELTY_MIN_WORDS = 2;
/** The share of new words is cut into this many equal bins. */
export const NOVELTY_BINS = 4;
/** A text of at most this many segments counts as short. */
export const NOVELTY_FEW_SEGMENTS = 3;

/** Counts, per text, in how many segments each word occurs. */
export interface NoveltyCounter {
  /** Forgets the previous text. */
  reset(): void;
  /** A distinct word (its n-gram bucket) of the current segment, `length` characters long. */
  word(bucket: number, length: number): void;
  /** The current segment ended. */
  endSegment(): void;
  /** Share, in [0, 1], of segment `index`'s counted words that no other segment uses; −1 when it has fewer than {@link NOVELTY_MIN_WORDS}. */
  share(index: number): number;
}

/** A {@link NoveltyCounter} for words given by their n-gram bucket, below `2^hashBits` (2 bytes per bucket). */
export function noveltyCounter(hashBits: number): NoveltyCounter {
  const tableMask = 2 ** hashBits - 1;
  const segmentsWith = new Uint16Array(tableMask + 1);
  const words = new IntBuffer();
  /** Index in `words` where each segment's words end. */
  const ends = new IntBuffer();
  return {
    reset: () => {
      for (let k = 0; k < words.length; k += 1) segmentsWith[words.values[k] ?? 0] = 0;
      words.length = 0;
      ends.length = 0;
    },
    word: (bucket, length) => {
      if (length < NOVELTY_MIN_WORD_LENGTH) return;
      const entry = bucket & tableMask;
      words.push(entry);
      const count = segmentsWith[entry] ?? 0;
      if (count < 0xffff) segmentsWith[entry] = count + 1;
    },
    endSegment: () => {
      ends.push(words.length);
    },
    share: (index) => {
      const from = index === 0 ? 0 : (ends.values[index - 1] ?? 0);
      const to = index < ends.length ? (ends.values[index] ?? from) : from;
      if (to - from < NOVELTY_MIN_WORDS) return -1;
      let novel = 0;
      for (let k = from; k < to; k += 1) if (segmentsWith[words.values[k] ?? 0] === 1) novel += 1;
      return novel / (to - from);
    },
  };
}

/**
 * The novelty feature buckets of a segment, for a table with index mask `mask`.
 * @returns a function from (share of new words or −1, segments in the text, whether an instruction phrase ends in the segment) to its buckets (none for −1).
 */
export function noveltyFeatures(mask: number): (share: number, segmentCount: number, cued: boolean) => readonly number[] {
  const bucket = (name: string) => namedFeatureHash(name) & mask;
  const table = Array.from({ length: NOVELTY_BINS }, (_, bin) =>
    ['few', 'many'].flatMap((size) => [
      [bucket(`novel:${bin}`), bucket(`novel:${bin}:${size}`)],
      [bucket(`novel:${bin}`), bucket(`novel:${bin}:${size}`), bucket(`novel:${bin}:cued`)],
    ]),
  );
  const none: readonly number[] = [];
  return (share, segmentCount, cued) => {
    if (share < 0) return none;
    const bin = Math.min(NOVELTY_BINS - 1, Math.floor(share * NOVELTY_BINS));
    return table[bin]?.[(segmentCount > NOVELTY_FEW_SEGMENTS ? 2 : 0) + (cued ? 1 : 0)] ?? [];
  };
}
