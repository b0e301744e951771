import { findHiddenContent, type HiddenContent } from './hidden-content.js';
import { htmlOnlyText } from './html-only-text.js';
import type { ScoringInput } from './injection-scorer.js';
import { findPhrases, INSTRUCTION_FAMILIES, PHRASE_FAMILIES, type PhraseMatch } from './instruction-phrasing.js';
import { headAndTail, MAX_TAIL_CHARS } from './text-ngrams.js';

/**
 * Characters of the text, of the HTML and of what the HTML shows beyond the
 * text that the first read of a message ({@link injectionFeatures}) examines
 * at most: of a longer one, its first `MAX_SCANNED_… −` {@link MAX_TAIL_CHARS}
 * and its last {@link MAX_TAIL_CHARS} characters (see {@link headAndTail}).
 * The local scorer reads all of a longer message too, in windows
 * ({@link wholeMessageText}, `readWindows`).
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

/** What the hiding and link checks counted in a message (`hidden-content.ts`): the signals after `hidden_instructions`. */
export type HidingCounts = Pick<
  HiddenContent,
  'invisibleChars' | 'tagChars' | 'hiddenElements' | 'textComments' | 'encodedTexts' | 'mismatchedLinks' | 'trickLinks' | 'markdownExfil'
>;

/** The hand-written signals of one message and the texts the n-gram features are taken from. */
export interface MessageFeatures {
  /** One value per {@link FEATURE_NAMES} entry. */
  signals: Float64Array;
  /**
   * Subject and text (head and tail, {@link MAX_SCANNED_TEXT}), then, after a
   * line break, the lines and sentences of the HTML's shown text (head and
   * tail, {@link MAX_SCANNED_TEXT}) that the text does not carry
   * (`html-only-text.ts`), without invisible characters, NFKC-normalised and
   * lower-cased; of a read of a window ({@link readFeatures}), that window.
   */
  visibleText: string;
  /** Hidden content (hidden HTML, comments, tag characters, decoded base64/hex), normalised the same way; `''` when none. */
  hiddenText: string;
  /** The instruction phrases found in `visibleText`, by position. */
  visibleMatches: PhraseMatch[];
  /** The instruction phrases found in `hiddenText`, by position. */
  hiddenMatches: PhraseMatch[];
  /** What the hiding and link checks counted. */
  hiding: HidingCounts;
  /**
   * Whether the head-and-tail bounds left something out: a text longer than
   * {@link MAX_SCANNED_TEXT}, an HTML part longer than {@link MAX_SCANNED_HTML}
   * or a shown text of the HTML longer than {@link MAX_SCANNED_TEXT}
   * ({@link wholeMessageText} then has all of it).
   */
  cut: boolean;
}

/** The visible and hidden text of a whole message, prepared as in {@link MessageFeatures}, and its hiding counts. */
export interface MessageText {
  visibleText: string;
  hiddenText: string;
  hiding: HidingCounts;
}

/**
 * Hidden text of a whole message read at most: of a longer one, its first
 * `MAX_WHOLE_HIDDEN − `{@link MAX_TAIL_CHARS} and last {@link MAX_TAIL_CHARS}
 * characters. Hidden text is not bounded by the size of the message (the
 * content of nested hidden elements is taken once per element, up to
 * `HIDDEN_CONTENT_BUDGET` characters).
 */
export const MAX_WHOLE_HIDDEN = 1_048_576;

/** The texts of `input` (head and tail of each part when `bounded`, else whole), prepared, and what the hidden-content checks found. */
function messageText(input: ScoringInput, bounded: boolean): MessageText & { cut: boolean } {
  const text = `${input.subject}\n${bounded ? headAndTail(input.text, MAX_SCANNED_TEXT) : input.text}`;
  const html = input.html && bounded ? headAndTail(input.html, MAX_SCANNED_HTML) : input.html;
  const hidden = findHiddenContent(text, html);
  const textVisible = hidden.cleanText.normalize('NFKC').toLowerCase();
  const shown = bounded ? headAndTail(hidden.htmlShownText, MAX_SCANNED_TEXT) : hidden.htmlShownText;
  const shownHtml = hidden.htmlShownText ? shown.normalize('NFKC').toLowerCase() : '';
  const htmlOnly = shownHtml ? htmlOnlyText(textVisible, shownHtml, textVisible.indexOf('\n') + 1) : '';
  const hiddenRaw = bounded ? hidden.hiddenText : headAndTail(hidden.hiddenText, MAX_WHOLE_HIDDEN);
  return {
    visibleText: htmlOnly ? `${textVisible}\n${htmlOnly}` : textVisible,
    hiddenText: hiddenRaw ? hiddenRaw.normalize('NFKC').toLowerCase() : '',
    hiding: {
      invisibleChars: hidden.invisibleChars,
      tagChars: hidden.tagChars,
      hiddenElements: hidden.hiddenElements,
      textComments: hidden.textComments,
      encodedTexts: hidden.encodedTexts,
      mismatchedLinks: hidden.mismatchedLinks,
      trickLinks: hidden.trickLinks,
      markdownExfil: hidden.markdownExfil,
    },
    cut:
      input.text.length > MAX_SCANNED_TEXT ||
      (input.html?.length ?? 0) > MAX_SCANNED_HTML ||
      hidden.htmlShownText.length > MAX_SCANNED_TEXT,
  };
}

/**
 * The visible and hidden text of the whole of `input` (no head-and-tail
 * bound on the text, the HTML or its shown text; hidden text up to
 * {@link MAX_WHOLE_HIDDEN}), prepared as {@link injectionFeatures} prepares
 * them, and its hiding counts. The caller bounds `input` (`bounded-input.ts`):
 * the work is linear in its size.
 */
export function wholeMessageText(input: ScoringInput): MessageText {
  const { visibleText, hiddenText, hiding } = messageText(input, false);
  return { visibleText, hiddenText, hiding };
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
  const { visibleText, hiddenText, hiding, cut } = messageText(input, true);
  return { ...readFeatures(visibleText, hiddenText, hiding), cut };
}

/**
 * The signals of one read of a message: the phrase families of
 * `visibleText` and `hiddenText` (prepared texts, or windows of them), and
 * the message's hiding counts. {@link injectionFeatures} reads a message so;
 * the local scorer reads the windows of a longer one so too.
 */
export function readFeatures(visibleText: string, hiddenText: string, hiding: HidingCounts): MessageFeatures {
  const visibleFound = findPhrases(visibleText);
  const phrases = visibleFound.counts;
  const hiddenFound = hiddenText ? findPhrases(hiddenText) : null;
  const hiddenPhrases = hiddenFound?.counts ?? null;
  const hiddenInstructions = hiddenPhrases ? INSTRUCTION_FAMILIES.reduce((sum, name) => sum + hiddenPhrases[name], 0) : 0;
  const sentences = Math.max(1, countSentenceEnds(visibleText));
  const instructionSentences = phrases.task_opening + phrases.question + phrases.output_direction + phrases.override;
  const vector = new Float64Array(FEATURE_NAMES.length);
  let index = 0;
  for (const [name] of PHRASE_FAMILIES) vector[index++] = damp(phrases[name]);
  vector[index++] = damp(hiddenInstructions);
  vector[index++] = damp(hiding.invisibleChars);
  vector[index++] = hiding.tagChars > 0 ? 1 : 0;
  vector[index++] = damp(hiding.hiddenElements);
  vector[index++] = damp(hiding.textComments);
  vector[index++] = damp(hiding.encodedTexts);
  vector[index++] = damp(hiding.mismatchedLinks);
  vector[index++] = damp(hiding.trickLinks);
  vector[index++] = hiding.markdownExfil;
  vector[index++] = Math.min(1, instructionSentences / sentences);
  return {
    signals: vector,
    visibleText,
    hiddenText,
    visibleMatches: visibleFound.matches,
    hiddenMatches: hiddenFound?.matches ?? [],
    hiding,
    cut: false,
  };
}
