import { findHiddenContent } from './hidden-content.js';
import { htmlOnlyText } from './html-only-text.js';
import type { ScoringInput } from './injection-scorer.js';
import { findPhrases, INSTRUCTION_FAMILIES, PHRASE_FAMILIES, type PhraseMatch } from './instruction-phrasing.js';
import { headAndTail, MAX_TAIL_CHARS } from './text-ngrams.js';

/**
 * Characters of the text, of the HTML and of what the HTML shows beyond the
 * text examined at most: of a longer one, its first `MAX_SCANNED_… −`
 * {@link MAX_TAIL_CHARS} and its last {@link MAX_TAIL_CHARS} characters
 * (see {@link headAndTail}), so that an instruction appended at the end is
 * seen while the work stays bounded.
 */
export const MAX_SCANNED_TEXT = 100_000;
export const MAX_SCANNED_HTML = 200_000;

/** Names of the features, in vector order. */
export const FEATURE_NAMES = [
  ...PHRASE_FAMILIES.map(([name]) => name),
  'hidden_instructions',
  'invisible_chars',
  'tag_chars',
  'hidden_elements',
  'text_comments',
  'encoded_texts',
  'mismatched_links',
  'trick_links',
  'markdown_exfil',
  'instruction_share',
] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];

/** A sentence end: a run of `.`, `!` or `?` before white space or the end of the text, or a blank line. */
const SENTENCE_END = /[.!?]+(?:\s|$)|\n\s*\n/g;

/** How many {@link SENTENCE_END}s `text` has (counted without collecting the matches). */
function countSentenceEnds(text: string): number {
  SENTENCE_END.lastIndex = 0;
  let count = 0;
  while (SENTENCE_END.test(text)) count += 1;
  return count;
}

/** `log(1 + n)`, so that the tenth hit adds less than the first. */
const damp = (count: number) => Math.log1p(Math.min(count, 20));

/** The hand-written signals of one message and the texts the n-gram features are taken from. */
export interface MessageFeatures {
  /** One value per {@link FEATURE_NAMES} entry. */
  signals: Float64Array;
  /**
   * Subject and text (head and tail, {@link MAX_SCANNED_TEXT}), then, after a
   * line break, the lines and sentences of the HTML's shown text (head and
   * tail, {@link MAX_SCANNED_TEXT}) that the text does not carry
   * (`html-only-text.ts`), without invisible characters, NFKC-normalised and
   * lower-cased.
   */
  visibleText: string;
  /** Hidden content (hidden HTML, comments, tag characters, decoded base64/hex), normalised the same way; `''` when none. */
  hiddenText: string;
  /** The instruction phrases found in `visibleText`, by position. */
  visibleMatches: PhraseMatch[];
  /** The instruction phrases found in `hiddenText`, by position. */
  hiddenMatches: PhraseMatch[];
}

/**
 * The hand-written signals of one message (see {@link FEATURE_NAMES}):
 * damped counts of each instruction phrasing family in the subject, the
 * text and what the HTML shows beyond the text; instruction phrasing found in hidden content (hidden HTML,
 * comments, Unicode tag characters, decoded base64/hex); counts of each
 * hiding or link trick; and the share of sentences that read as
 * instructions. Also returns the visible and hidden text, prepared.
 */
export function injectionFeatures(input: ScoringInput): MessageFeatures {
  const text = `${input.subject}\n${headAndTail(input.text, MAX_SCANNED_TEXT)}`;
  const html = input.html ? headAndTail(input.html, MAX_SCANNED_HTML) : input.html;
  const hidden = findHiddenContent(text, html);
  const textVisible = hidden.cleanText.normalize('NFKC').toLowerCase();
  const shownHtml = hidden.htmlShownText ? headAndTail(hidden.htmlShownText, MAX_SCANNED_TEXT).normalize('NFKC').toLowerCase() : '';
  const htmlOnly = shownHtml ? htmlOnlyText(textVisible, shownHtml, textVisible.indexOf('\n') + 1) : '';
  const visible = htmlOnly ? `${textVisible}\n${htmlOnly}` : textVisible;
  const visibleFound = findPhrases(visible);
  const phrases = visibleFound.counts;
  const hiddenText = hidden.hiddenText ? hidden.hiddenText.normalize('NFKC').toLowerCase() : '';
  const hiddenFound = hiddenText ? findPhrases(hiddenText) : null;
  const hiddenPhrases = hiddenFound?.counts ?? null;
  const hiddenInstructions = hiddenPhrases ? INSTRUCTION_FAMILIES.reduce((sum, name) => sum + hiddenPhrases[name], 0) : 0;
  const sentences = Math.max(1, countSentenceEnds(visible));
  const instructionSentences = phrases.task_opening + phrases.question + phrases.output_direction + phrases.override;
  const vector = new Float64Array(FEATURE_NAMES.length);
  let index = 0;
  for (const [name] of PHRASE_FAMILIES) vector[index++] = damp(phrases[name]);
  vector[index++] = damp(hiddenInstructions);
  vector[index++] = damp(hidden.invisibleChars);
  vector[index++] = hidden.tagChars > 0 ? 1 : 0;
  vector[index++] = damp(hidden.hiddenElements);
  vector[index++] = damp(hidden.textComments);
  vector[index++] = damp(hidden.encodedTexts);
  vector[index++] = damp(hidden.mismatchedLinks);
  vector[index++] = damp(hidden.trickLinks);
  vector[index++] = hidden.markdownExfil;
  vector[index++] = Math.min(1, instructionSentences / sentences);
  return {
    signals: vector,
    visibleText: visible,
    hiddenText,
    visibleMatches: visibleFound.matches,
    hiddenMatches: hiddenFound?.matches ?? [],
  };
}
