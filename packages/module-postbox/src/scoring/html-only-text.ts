/**
 * What the HTML part of a mail shows that its text part does not say.
 *
 * A multipart/alternative mail carries the same message twice, as text and
 * as HTML, and an agent may be handed either. The scorer reads the text; an
 * HTML part that says something else (an instruction shown only in the
 * HTML) must be read too, but an ordinary mail, whose text part is a
 * rendering of its HTML, must score as before: reading both would double
 * every sentence, which the model never saw in training (BIPIA mails are
 * plain text). So only the lines and sentences of the HTML's shown text
 * that the text does not carry word for word are added to what is scored.
 */

import { INVISIBLE } from './hidden-content.js';
import { isWordChar } from './text-ngrams.js';

/**
 * Characters of the text scanned or compared at most per message, beyond
 * twice the length of the HTML's shown text (what reading a text that
 * follows the HTML costs), while looking for the HTML's lines and sentences
 * in the text. This bounds the work for HTML whose lines use the text's
 * words in another order (about a millisecond); once it is spent, the
 * remaining lines are added without a search: they are scored, not skipped.
 */
export const HTML_SEARCH_BUDGET = 200_000;

/** Position of the first word character of `text` at or after `from` (`text.length` when none). */
function nextWord(text: string, from: number): number {
  let at = from;
  while (at < text.length && !isWordChar(text.charCodeAt(at))) at += 1;
  return at;
}

/** Bits of the word filter: one bit per word hash (16 KB, reused: a call is synchronous). */
const FILTER_BITS = 1 << 17;
const filter = new Uint32Array(FILTER_BITS >>> 5);

/**
 * Sets the {@link filter} bit of each word of `text` (`fill`), or checks
 * that each word of `text` has its bit set (`check`: false when one has not).
 * Word hash: FNV-1a of its characters, cut to {@link FILTER_BITS}.
 */
function filterWords(text: string, mode: 'fill' | 'check'): boolean {
  let hash = 0x811c9dc5;
  let inWord = false;
  for (let i = 0; i <= text.length; i += 1) {
    const code = i < text.length ? text.charCodeAt(i) : 0x20;
    if (isWordChar(code)) {
      hash = Math.imul(hash ^ code, 0x01000193);
      inWord = true;
    } else if (inWord) {
      const bit = hash & (FILTER_BITS - 1);
      const slot = bit >>> 5;
      const mask = 1 << (bit & 31);
      if (mode === 'fill') filter[slot] = (filter[slot] ?? 0) | mask;
      else if (((filter[slot] ?? 0) & mask) === 0) return false;
      hash = 0x811c9dc5;
      inWord = false;
    }
  }
  return true;
}

/** One search of the text: the text, where the last carried piece ended, and the work left. */
interface Search {
  text: string;
  /** First word character at or after the end of the last carried piece. */
  cursor: number;
  budget: number;
  /** Whether {@link filter} holds the words of `text`. */
  filtered: boolean;
}

/**
 * Whether the words of `piece` (which starts with a word character) occur
 * in the text, in order and contiguously, from the word starting at `at`;
 * the characters between words may differ (punctuation, white space, line
 * wrapping). Charges the characters read to the budget.
 * @returns where the match ends in the text, or −1.
 */
function wordsMatchAt(search: Search, at: number, piece: string): number {
  const text = search.text;
  // Compared as a slice: V8's startsWith compares character by character, `===` by memory.
  if (text.slice(at, at + piece.length) === piece) {
    search.budget -= piece.length;
    return at + piece.length;
  }
  let i = at;
  let j = 0;
  let end = -1;
  for (;;) {
    while (j < piece.length && piece.charCodeAt(j) === text.charCodeAt(i) && isWordChar(piece.charCodeAt(j))) {
      i += 1;
      j += 1;
    }
    if ((j < piece.length && isWordChar(piece.charCodeAt(j))) || isWordChar(text.charCodeAt(i))) break;
    j = nextWord(piece, j);
    if (j >= piece.length) {
      end = i;
      break;
    }
    i = nextWord(text, i);
    if (i >= text.length) break;
  }
  search.budget -= i - at + 1;
  return end;
}

/**
 * Whether the text carries the words of `piece`: from the cursor (the text
 * follows the HTML's order), else anywhere (unless the filter shows a word
 * of `piece` the text lacks); moves the cursor past the match. Pieces
 * without a word count as carried; once the budget is spent, none other does.
 */
function carried(search: Search, raw: string): boolean {
  const first = nextWord(raw, 0);
  if (first >= raw.length) return true;
  if (search.budget <= 0) return false;
  const piece = first === 0 ? raw : raw.slice(first);
  const text = search.text;
  let end = search.cursor < text.length ? wordsMatchAt(search, search.cursor, piece) : -1;
  if (end === -1) {
    if (!search.filtered) {
      filter.fill(0);
      filterWords(text, 'fill');
      search.filtered = true;
    }
    if (!filterWords(piece, 'check')) return false;
    let wordEnd = 0;
    while (wordEnd < piece.length && isWordChar(piece.charCodeAt(wordEnd))) wordEnd += 1;
    const firstWord = piece.slice(0, wordEnd);
    // Each search is charged what it reads: the characters it passes and the word it compares.
    let candidate = text.indexOf(firstWord);
    search.budget -= (candidate === -1 ? text.length : candidate) + firstWord.length;
    while (candidate !== -1 && search.budget > 0) {
      if (candidate === 0 || !isWordChar(text.charCodeAt(candidate - 1))) {
        end = wordsMatchAt(search, candidate, piece);
        if (end !== -1) break;
      }
      // A match inside a word is no candidate: search on from the end of this word.
      let from = candidate + firstWord.length;
      while (from < text.length && isWordChar(text.charCodeAt(from))) from += 1;
      const next = text.indexOf(firstWord, from);
      search.budget -= (next === -1 ? text.length : next) - candidate + firstWord.length;
      candidate = next;
    }
    if (end === -1) return false;
  }
  const cursor = nextWord(text, end);
  search.budget -= cursor - end;
  search.cursor = cursor;
  return true;
}

/**
 * White space that `replace(/\s+/g, ' ')` changes: other than a space, or a
 * run of two or more. Pieces without it are added as they are: replacing
 * every single space of each piece (a new string built per piece) cost
 * 40 ms for 1 MiB of HTML lines the text lacks, mostly in the collector.
 */
const UNEVEN_SPACE = /[^\S ]| \s/;

/** A sentence end inside a line: `.`, `!` or `?` followed by white space. */
const SENTENCE_BREAK = /(?<=[.!?])\s+/;

/**
 * The lines and sentences of the HTML's shown text that the text part does
 * not carry word for word, in their order, each once, joined by line
 * breaks; `''` when the text carries all of them.
 *
 * The shown text is read line by line (block tags became line breaks); a
 * line the text does not carry is cut into sentences (after `.`, `!` or `?`
 * followed by white space), and those the text does not carry are added.
 * A line or sentence is carried when its words occur in the text in the
 * same order, one after the other (punctuation, white space and line
 * wrapping ignored: "Use code <b>FRIDAY30</b>." is carried by "Use code
 * FRIDAY30 at checkout."). The search starts where the previous carried one
 * ended, so a text in the HTML's order costs one pass. Before the whole text
 * is searched, the words are looked up in a filter of the text's words (a
 * line with a word the text lacks is not carried), so HTML full of lines
 * the text lacks (menus, footers, an instruction) costs one pass over the
 * text. The work is bounded by {@link HTML_SEARCH_BUDGET}.
 * @param text the subject and text, prepared as the scorer reads them (NFKC, lower case).
 * @param shownHtml the HTML's shown text (`findHiddenContent`'s `htmlShownText`), prepared the same way.
 * @param bodyStart where the body starts in `text` (after the subject): where the search starts.
 */
export function htmlOnlyText(text: string, shownHtml: string, bodyStart = 0): string {
  const search: Search = { text, cursor: nextWord(text, bodyStart), budget: HTML_SEARCH_BUDGET + 2 * shownHtml.length, filtered: false };
  let added = '';
  /** The pieces added so far. */
  const seen = new Set<string>();
  /** Adds `piece` (known not to be carried) unless it was added before. */
  const add = (piece: string) => {
    if (seen.has(piece)) return;
    seen.add(piece);
    const visible = piece.replace(INVISIBLE, '');
    const clean = UNEVEN_SPACE.test(visible) ? visible.replace(/\s+/g, ' ') : visible;
    added = added ? `${added}\n${clean}` : clean;
  };
  let start = 0;
  while (start < shownHtml.length) {
    if (search.budget <= 0) {
      // Out of budget: the rest is added as it is, unsearched.
      const rest = shownHtml
        .slice(start)
        .replace(INVISIBLE, '')
        .replace(/[^\S\n]+/g, ' ')
        .replace(/\s*\n\s*/g, '\n')
        .trim();
      if (rest) added = added ? `${added}\n${rest}` : rest;
      break;
    }
    let end = shownHtml.indexOf('\n', start);
    if (end === -1) end = shownHtml.length;
    const line = shownHtml.slice(start, end).trim();
    start = end + 1;
    if (line === '' || seen.has(line) || carried(search, line)) continue;
    const sentences = line.split(SENTENCE_BREAK);
    if (sentences.length === 1) add(line);
    else for (const sentence of sentences) if (!seen.has(sentence) && !carried(search, sentence)) add(sentence);
  }
  return added;
}
