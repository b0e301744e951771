/**
 * Which of several lists of strings occur in a text, in one pass: an
 * Aho–Corasick automaton (Aho and Corasick, "Efficient string matching",
 * CACM 1975) compiled to a dense transition table over character classes.
 * The phrase families (`instruction-phrasing.ts`) use it to skip a regular
 * expression that cannot match: one pass over a 20 KB text costs about as
 * much as one of their eleven expressions.
 *
 * Matching is by UTF-16 code unit, exactly as a regular expression without
 * the `i` or `u` flag compares a literal, and a scan allocates nothing. (The
 * Aho–Corasick packages on npm match grapheme clusters, which would miss
 * `ignore` in `ignore\u0301`, or return a match object per hit.)
 */

/**
 * The UTF-16 code units that `\s` matches (ECMAScript's WhiteSpace and
 * LineTerminator: tab, vertical tab, form feed, BOM, the Unicode space
 * separators, line feed, carriage return, line and paragraph separators),
 * which a scan reads as a space.
 */
export const WHITESPACE_CODES: readonly number[] = [
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
  0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
];

const SPACE = 0x20;

/** Lists at most: the scan returns one bit per list in a 32-bit integer. */
export const MAX_ANCHOR_LISTS = 31;

/**
 * Scans a text for the strings of each list given to {@link createAnchorScanner},
 * reading each run of white space ({@link WHITESPACE_CODES}) as one space.
 * @returns a bit mask: bit `k` is set when a string of list `k` occurs in `text`.
 */
export type AnchorScanner = (text: string) => number;

/**
 * An {@link AnchorScanner} for `lists` (non-empty strings whose only white
 * space is single spaces; a string may be in several lists). As the text's
 * white space runs are read as one space, a string with a space is found
 * wherever the text has any white space there: more lists can be reported
 * than a literal search would, never fewer.
 *
 * Builds a trie of the strings, then its Aho–Corasick failure links breadth
 * first, filling each state's row of the table with the state a character
 * class leads to (its child, else where its failure link leads), and its
 * output with the lists of every string that ends there or at a state its
 * failure links reach. Characters that no string uses share class 0. A state
 * entered by a space stays on further white space, which is how a run is
 * read as one space. Memory: 4 bytes × states × (2^⌈log2 classes⌉ + 1).
 * @throws Error when there are more than {@link MAX_ANCHOR_LISTS} lists, or
 *   a string is empty or has other white space than single spaces.
 */
export function createAnchorScanner(lists: readonly (readonly string[])[]): AnchorScanner {
  if (lists.length > MAX_ANCHOR_LISTS) throw new Error(`An anchor scanner takes at most ${MAX_ANCHOR_LISTS} lists.`);
  const anchors = lists.flat();
  for (const anchor of anchors) {
    if (anchor === '' || anchor.includes('  ') || /[^\S ]/.test(anchor)) {
      throw new Error('An anchor string is empty, or has white space other than single spaces.');
    }
  }
  const classOf = new Uint8Array(0x10000);
  let classes = 1;
  for (const anchor of anchors) {
    for (let i = 0; i < anchor.length; i += 1) {
      const code = anchor.charCodeAt(i);
      if (classOf[code] === 0) classOf[code] = classes++;
    }
  }
  if (classes > 0x100) throw new Error('The anchor strings use more than 255 distinct characters.');
  const space = classOf[SPACE] ?? 0;
  for (const code of WHITESPACE_CODES) classOf[code] = space;
  let shift = 0;
  while (1 << shift < classes) shift += 1;

  // The trie: its edges by `state << 8 | class`, and each state's children as a list (first child, next sibling).
  const bound = 1 + anchors.reduce((sum, anchor) => sum + anchor.length, 0);
  const edges = new Map<number, number>();
  const firstChild = new Int32Array(bound);
  const nextSibling = new Int32Array(bound);
  const symbolOf = new Int32Array(bound);
  const ownOutput = new Int32Array(bound);
  let states = 1;
  lists.forEach((list, bit) => {
    for (const anchor of list) {
      let state = 0;
      for (let i = 0; i < anchor.length; i += 1) {
        const symbol = classOf[anchor.charCodeAt(i)] ?? 0;
        let child = edges.get((state << 8) | symbol);
        if (child === undefined) {
          child = states;
          states += 1;
          edges.set((state << 8) | symbol, child);
          symbolOf[child] = symbol;
          nextSibling[child] = firstChild[state] ?? 0;
          firstChild[state] = child;
        }
        state = child;
      }
      ownOutput[state] = (ownOutput[state] ?? 0) | (1 << bit);
    }
  });

  /** Row `state << shift`: per class, the next state's row index (`next << shift`). */
  const table = new Int32Array(states << shift);
  /** Per state: the lists whose strings end in it. */
  const output = new Int32Array(states);
  const failure = new Int32Array(states);
  const queue = new Int32Array(states);
  let tail = 1;
  // Breadth first, so that a state's failure state (shallower) has its row and output complete before they are read.
  for (let head = 0; head < tail; head += 1) {
    const state = queue[head] ?? 0;
    const fallback = failure[state] ?? 0;
    output[state] = (ownOutput[state] ?? 0) | (output[fallback] ?? 0);
    // Where the failure state goes, this state goes too, except along its own children (the root's row starts at 0).
    if (state !== 0) table.copyWithin(state << shift, fallback << shift, (fallback + 1) << shift);
    for (let child = firstChild[state] ?? 0; child !== 0; child = nextSibling[child] ?? 0) {
      const at = (state << shift) | (symbolOf[child] ?? 0);
      failure[child] = state === 0 ? 0 : (table[at] ?? 0) >> shift;
      table[at] = child << shift;
      queue[tail] = child;
      tail += 1;
    }
    if (space !== 0 && state !== 0 && symbolOf[state] === space) table[(state << shift) | space] = state << shift;
  }

  return (text) => {
    let row = 0;
    let found = 0;
    const length = text.length;
    for (let i = 0; i < length; i += 1) {
      row = table[row | (classOf[text.charCodeAt(i)] ?? 0)] ?? 0;
      found |= output[row >> shift] ?? 0;
    }
    return found;
  };
}
