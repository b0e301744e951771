/**
 * Hashed n-grams of a message's text, sentence by sentence: the sparse
 * features of the local injection model. Per segment (a sentence or line):
 * word unigrams, word bigrams, word stems, the first word and the character
 * that ended the segment, each hashed (32-bit FNV-1a, then MurmurHash3's
 * finaliser, cut to 31 bits); the model keeps the low `hashBits` bits. One linear pass; one read
 * examines at most {@link MAX_READ_CHARS} characters and {@link MAX_WORDS} words of a text (see
 * {@link scoredText}), and the scorer reads a longer text in windows ({@link readWindows}).
 * (Character n-grams were tried and left out: they lowered the cross-validated ROC-AUC on BIPIA.)
 */

/** Characters of the start of a text one read examines at most. */
export const MAX_HEAD_CHARS = 16_000;
/** Characters of the end of a longer text one read examines as well (an instruction appended at the end is still seen). */
export const MAX_TAIL_CHARS = 8_000;
/** Words examined at most (bounds the work for text made of one-letter words). */
export const MAX_WORDS = 6_000;
/** A word longer than this many characters also yields a `stem` feature, its first this many characters ("trans" of "translation" and "translate"; 5 beat 4, 6 and 7 by cross-validation). */
export const STEM_LENGTH = 5;
/** Words per segment at most: a longer run without a sentence end is cut into segments of this size. */
export const MAX_SEGMENT_WORDS = 48;

/**
 * Kinds of feature, mixed into the hash so that the word "ask" and the first word "ask" differ: `first` is
 * the first word of a segment, `end` the character that ended it (`?`, `!`, `.`, `:`, `;`, a line break, or none),
 * `cue` an instruction phrase family found in the segment (`segment-features.ts`),
 * `stem` the first {@link STEM_LENGTH} characters of a longer word.
 */
export const NGRAM_KIND = { word: 1, bigram: 2, first: 3, end: 4, cue: 5, stem: 6 } as const;
export type NgramKind = (typeof NGRAM_KIND)[keyof typeof NGRAM_KIND];

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Characters one read of the n-gram model covers: a text of at most this many characters (and {@link MAX_WORDS} words) is read whole. */
export const MAX_READ_CHARS = MAX_HEAD_CHARS + MAX_TAIL_CHARS;
/**
 * Characters by which consecutive windows of a longer text overlap at most
 * (see {@link readWindows}): a window starts at the first sentence that
 * begins in the last this many characters of the window before it.
 */
export const READ_OVERLAP_CHARS = 2_000;

/**
 * The part of a (normalised, lower-cased) text whose n-grams are scored:
 * the first {@link MAX_HEAD_CHARS} characters and, for longer text, the
 * last {@link MAX_TAIL_CHARS}.
 */
export function scoredText(text: string): string {
  return headAndTail(text, MAX_HEAD_CHARS + MAX_TAIL_CHARS);
}

/**
 * `text` when it has at most `max` characters; else its first
 * `max − MAX_TAIL_CHARS` and its last {@link MAX_TAIL_CHARS} characters,
 * joined by a line break (the middle is not examined).
 */
export function headAndTail(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - MAX_TAIL_CHARS)}\n${text.slice(text.length - MAX_TAIL_CHARS)}` : text;
}

/** Where position `at` of a text of `length` characters is in its {@link scoredText}, or −1 when that part was cut. */
export function scoredPosition(at: number, length: number): number {
  if (length <= MAX_HEAD_CHARS + MAX_TAIL_CHARS || at < MAX_HEAD_CHARS) return at;
  const tailStart = length - MAX_TAIL_CHARS;
  return at >= tailStart ? at - tailStart + MAX_HEAD_CHARS + 1 : -1;
}

/** The 31-bit hash of a feature given by name (for features that are not n-grams, such as phrase cues). */
export function namedFeatureHash(name: string): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < name.length; i += 1) hash = Math.imul(hash ^ name.charCodeAt(i), FNV_PRIME);
  return mix(hash >>> 0);
}

/**
 * Final avalanche of MurmurHash3 (`fmix32`), so that the low bits used as
 * the table index depend on every input bit; the top bit is dropped, so the
 * result is a small integer to V8 (below 2^31) and passing it on allocates
 * nothing, where a full 32-bit value became a heap number per n-gram. Models
 * index at most 22 bits (`injection-model.ts`), so no bucket changes.
 */
function mix(hash: number): number {
  let h = hash ^ (hash >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) & 0x7fffffff;
}

/**
 * The hash {@link forEachNgram} gives the word unigram of `word`, read by
 * that same pass, so that tables keyed by word (the model's topic vectors)
 * can be looked up from it; `null` when the pass does not read `word` as
 * exactly one word (it splits `u.s.`, drops `—`; the scored text is lower case).
 */
export function wordUnigramHash(word: string): number | null {
  let hash: number | null = null;
  let words = 0;
  forEachNgram(
    word,
    (found, kind, start, end) => {
      if (kind !== NGRAM_KIND.word) return;
      words += 1;
      if (start === 0 && end === word.length) hash = found;
    },
    () => undefined,
  );
  return words === 1 ? hash : null;
}

/** A letter or digit of any script (word characters; the scored text is lower case). */
export const isWordChar = (code: number): boolean =>
  (code >= 0x61 && code <= 0x7a) ||
  (code >= 0x30 && code <= 0x39) ||
  (code >= 0xc0 && code !== 0xd7 && code !== 0xf7 && !(code >= 0x2000 && code <= 0x2bff) && !(code >= 0x3000 && code <= 0x303f));

/** Whether a character between two words ends a segment: a line break, `!`, `?`, `;`, `:` or a `.` followed by a space. */
const endsSegment = (text: string, at: number): boolean => {
  const code = text.charCodeAt(at);
  if (code === 0x0a || code === 0x21 || code === 0x3f || code === 0x3b || code === 0x3a) return true;
  if (code !== 0x2e) return false;
  const next = text.charCodeAt(at + 1);
  return Number.isNaN(next) || next === 0x20 || next === 0x0a || next === 0x0d || next === 0x09;
};

/** Whether the character at `at` of `text` (not a word character) keeps a word going: an apostrophe between word characters, as {@link forEachNgram} reads words. */
const joinsWord = (text: string, at: number): boolean => {
  const code = text.charCodeAt(at);
  return (code === 0x27 || code === 0x2019) && at > 0 && isWordChar(text.charCodeAt(at - 1)) && isWordChar(text.charCodeAt(at + 1));
};

/**
 * Where the word after the first `words` words of `text` from `from` starts
 * (words as {@link forEachNgram} reads them, counted from `from`), or `to`
 * when `[from, to)` has no more words than that. Reads `[from, to)` at most.
 */
function afterWords(text: string, from: number, to: number, words: number): number {
  let count = 0;
  let i = from;
  while (i < to) {
    while (i < to && !isWordChar(text.charCodeAt(i))) i += 1;
    if (i >= to) break;
    if (count === words) return i;
    count += 1;
    while (i < to && (isWordChar(text.charCodeAt(i)) || joinsWord(text, i))) i += 1;
  }
  return to;
}

/** Whether a word starts at `at`: a word character after one that is not part of a word. */
const startsWord = (text: string, at: number): boolean =>
  isWordChar(text.charCodeAt(at)) && !isWordChar(text.charCodeAt(at - 1)) && !joinsWord(text, at - 1);

/*
 * A sentence starts where a word starts after a gap that ends a segment (a
 * line break, `!`, `?`, `;`, `:` or a `.` before white space): forEachNgram
 * starts a new segment there, so a window of a text that starts there reads
 * the same sentences as the whole text.
 */

/** The first position in `[from, to]` where a sentence starts (its gap seen from `from` on), or −1. Reads `[from, to]` once. */
function firstSentenceStart(text: string, from: number, to: number): number {
  let ended = false;
  const end = Math.min(to, text.length - 1);
  for (let i = from; i <= end; i += 1) {
    if (isWordChar(text.charCodeAt(i))) {
      if (ended) return i;
    } else if (!ended && endsSegment(text, i)) ended = true;
  }
  return -1;
}

/** The last position in `(from, to]` where a sentence starts (its gap seen from `from` on), or −1. Reads backwards from `to`, each character once. */
function lastSentenceStart(text: string, from: number, to: number): number {
  let at = Math.min(to, text.length - 1);
  while (at > from) {
    if (!startsWord(text, at)) {
      at -= 1;
      continue;
    }
    let gap = at - 1;
    let ended = false;
    for (; gap >= from && !isWordChar(text.charCodeAt(gap)); gap -= 1) if (!ended && endsSegment(text, gap)) ended = true;
    if (ended) return at;
    at = gap;
  }
  return -1;
}

/** The last position in `(from, to]` where a word starts, or −1. */
function lastWordStart(text: string, from: number, to: number): number {
  for (let at = Math.min(to, text.length - 1); at > from; at -= 1) if (startsWord(text, at)) return at;
  return -1;
}

/** Whether {@link forEachNgram} reads all of `text`: at most {@link MAX_READ_CHARS} characters (nothing cut by {@link scoredText}) and {@link MAX_WORDS} words. */
export function fitsOneRead(text: string): boolean {
  if (text.length > MAX_READ_CHARS) return false;
  return text.length <= 2 * MAX_WORDS || afterWords(text, 0, text.length, MAX_WORDS) === text.length;
}

/**
 * Windows `[start, end)` that together cover all of `text` (prepared: lower
 * case), each read whole by one read of the n-gram model (at most
 * {@link MAX_READ_CHARS} characters and fewer than {@link MAX_WORDS}
 * words), as a flat list `[start0, end0, start1, end1, …]`. A window ends
 * where a sentence starts (a word after a segment end), at the last such
 * place in the second half of what one read covers from its start; failing
 * that, before a word; failing that (a single word of thousands of
 * characters), where the read ends. The next window starts at the first
 * sentence that starts in the last {@link READ_OVERLAP_CHARS} characters of
 * the one before, else where it ended: a sentence up to that long that
 * crosses the end of a window is read whole by the next, and a window
 * starts with a sentence as the whole text has it. Each window starts at
 * least half a read after the one before (5,999 words take 11,997
 * characters or more), and finding one reads each of its characters at
 * most three times: for a text of `n` characters the windows hold at most
 * about 1.33 `n` characters (about 1.1 `n` for prose) and the work is
 * linear in `n`. A `text` of at most {@link MAX_READ_CHARS} characters and
 * fewer than {@link MAX_WORDS} words is one window.
 */
export function readWindows(text: string): number[] {
  const windows: number[] = [];
  let start = 0;
  for (;;) {
    const limit = afterWords(text, start, Math.min(text.length, start + MAX_READ_CHARS), MAX_WORDS - 1);
    if (limit >= text.length) {
      windows.push(start, text.length);
      return windows;
    }
    const half = start + ((limit - start) >> 1);
    let end = lastSentenceStart(text, half, limit);
    if (end === -1) end = lastWordStart(text, half, limit);
    if (end === -1) end = limit;
    windows.push(start, end);
    const next = firstSentenceStart(text, Math.max(half + 1, end - READ_OVERLAP_CHARS), end - 1);
    start = next === -1 ? end : next;
  }
}

/** Receives one n-gram: its 31-bit hash and the character span `[start, end)` of the word(s) it came from. */
export type NgramVisitor = (hash: number, kind: NgramKind, start: number, end: number) => void;
/** Called at the end of each segment with its character span `[start, end)` and where the next segment's text starts (`next`, the text's length after the last). */
export type SegmentVisitor = (start: number, end: number, next: number) => void;

/** Ends the segment `[start, end)` that `terminator` (a character code, 0 for none) ended: its `end` feature, then `endSegment` (the next segment's text starts at `next`). */
function closeSegment(visit: NgramVisitor, endSegment: SegmentVisitor, terminator: number, start: number, end: number, next: number): void {
  visit(mix(Math.imul(FNV_OFFSET ^ terminator ^ (NGRAM_KIND.end << 16), FNV_PRIME)), NGRAM_KIND.end, end, end);
  endSegment(start, end, next);
}

/**
 * Calls `visit` for every n-gram of `text` (already prepared with
 * {@link scoredText}), in text order, duplicates included: per word its
 * unigram, its `stem` when it is longer than {@link STEM_LENGTH}
 * characters, then the bigram it ends (never across segments) or, for the
 * first word of a segment, a `first` feature; at the end of each segment an
 * `end` feature (which character ended it), then `endSegment`.
 * Words are runs of letters and digits (any script); `'` and `’` between
 * letters stay inside a word. Segments end at a line break, `!`, `?`, `;`,
 * `:`, a `.` followed by white space, or after {@link MAX_SEGMENT_WORDS} words.
 * @returns whether every word of `text` was read (false when it has more than {@link MAX_WORDS}).
 */
export function forEachNgram(text: string, visit: NgramVisitor, endSegment: SegmentVisitor): boolean {
  let previousHash = 0;
  let previousStart = 0;
  let segmentStart = -1;
  let segmentWords = 0;
  let lastEnd = 0;
  let words = 0;
  let i = 0;
  const length = text.length;
  while (i < length && words < MAX_WORDS) {
    let terminator = 0;
    while (i < length && !isWordChar(text.charCodeAt(i))) {
      if (terminator === 0 && segmentStart !== -1 && endsSegment(text, i)) terminator = text.charCodeAt(i);
      i += 1;
    }
    if (segmentStart !== -1 && (terminator !== 0 || segmentWords >= MAX_SEGMENT_WORDS || i >= length)) {
      closeSegment(visit, endSegment, terminator, segmentStart, lastEnd, i);
      segmentStart = -1;
    }
    if (i >= length) break;
    const start = i;
    let hash = FNV_OFFSET;
    let stemHash = 0;
    while (i < length) {
      const code = text.charCodeAt(i);
      if (!isWordChar(code)) {
        const apostrophe = code === 0x27 || code === 0x2019;
        if (!(apostrophe && i + 1 < length && isWordChar(text.charCodeAt(i + 1)))) break;
      }
      hash = Math.imul(hash ^ code, FNV_PRIME);
      i += 1;
      if (i - start === STEM_LENGTH) stemHash = hash;
    }
    words += 1;
    // Kept signed (as Math.imul gives it): only 32-bit operations read it, and as an unsigned
    // value (`>>> 0`) half the words' hashes were over 2^31, a heap number per word once carried to the next.
    const wordHash = Math.imul(hash ^ NGRAM_KIND.word, FNV_PRIME);
    visit(mix(wordHash), NGRAM_KIND.word, start, i);
    if (i - start > STEM_LENGTH) visit(mix(Math.imul(stemHash ^ NGRAM_KIND.stem, FNV_PRIME)), NGRAM_KIND.stem, start, i);
    if (segmentStart === -1) {
      segmentStart = start;
      segmentWords = 0;
      visit(mix(Math.imul(hash ^ NGRAM_KIND.first, FNV_PRIME)), NGRAM_KIND.first, start, i);
    } else {
      const bigram = Math.imul(Math.imul(previousHash, 0x9e3779b1) ^ wordHash ^ NGRAM_KIND.bigram, FNV_PRIME);
      visit(mix(bigram), NGRAM_KIND.bigram, previousStart, i);
    }
    segmentWords += 1;
    previousHash = wordHash;
    previousStart = start;
    lastEnd = i;
  }
  if (segmentStart !== -1) closeSegment(visit, endSegment, 0, segmentStart, lastEnd, length);
  while (i < length && !isWordChar(text.charCodeAt(i))) i += 1;
  return i >= length;
}
