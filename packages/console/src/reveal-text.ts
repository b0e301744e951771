import { htmlTokens } from './html-tokens.js';

/** A run of caller-supplied text; `hidden` when it was hidden from a human reader (CSS, invisible or control characters). */
export interface TextSegment {
  text: string;
  hidden: boolean;
}

const HIDING_STYLE =
  /display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])|max-height\s*:\s*0|color\s*:\s*(?:#fff\b|#ffffff\b|white\b|transparent\b)/i;
/**
 * Characters that are invisible or change how the text around them renders:
 * C0 controls other than tab, line feed and carriage return (bell, backspace,
 * escape …), DEL and C1 controls, Unicode format characters (zero-width,
 * bidi embeddings, overrides and isolates, tags …), line and paragraph
 * separators, and the blank fillers and joiners a reader cannot see.
 */
const INVISIBLE = /(?![\t\n\r])\p{Cc}|\p{Cf}|[\u034f\u115f\u1160\u17b4\u17b5\u2028\u2029\u3164\uffa0\u{e0000}-\u{e007f}]/gu;
const VOID = new Set(['br', 'hr', 'img', 'meta', 'link', 'input', 'wbr', 'area', 'base', 'col', 'source', 'track', 'embed']);
const BLOCK = new Set(['p', 'div', 'br', 'li', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'ul', 'ol', 'blockquote', 'hr']);
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return Number.isInteger(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match;
    }
    return ENTITIES[name.toLowerCase()] ?? match;
  });
}

/** `[U+XXXX]`: the code point of `char` in hex, at least four digits. */
function codePointMarker(char: string): string {
  return `[U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`;
}

function push(segments: TextSegment[], text: string, hidden: boolean): void {
  if (text === '') return;
  const last = segments.at(-1);
  if (last && last.hidden === hidden) last.text += text;
  else segments.push({ text, hidden });
}

/**
 * Splits plain text so invisible and control characters become visible
 * `[U+XXXX]` markers (`[U+001B]` for escape) flagged as hidden.
 */
export function revealInvisible(text: string): TextSegment[] {
  const segments: TextSegment[] = [];
  let at = 0;
  for (const match of text.matchAll(INVISIBLE)) {
    push(segments, text.slice(at, match.index), false);
    push(segments, codePointMarker(match[0]), true);
    at = match.index + match[0].length;
  }
  push(segments, text.slice(at), false);
  return segments;
}

/**
 * `text` with its invisible and control characters written as `[U+XXXX]`
 * markers, for places that take a plain string (titles, tooltips, button
 * labels, confirmations, flash messages).
 */
export function revealedText(text: string): string {
  return text.replace(INVISIBLE, codePointMarker);
}

/**
 * The text of an HTML body without rendering it: tags dropped, entities
 * decoded, and text inside elements styled to be invisible (display none,
 * zero font size or opacity, white or transparent colour, hidden
 * attribute) returned as hidden segments; comments are hidden text too.
 * A link's target follows its text as `[link: …]`, never as a link.
 * Linear in the length of `html` (see {@link htmlTokens}): a mail's HTML is
 * converted on the server's event loop when an operator opens it.
 */
export function htmlAsText(html: string): TextSegment[] {
  const segments: TextSegment[] = [];
  const stack: Array<{ tag: string; hidden: boolean; href?: string }> = [];
  /** How many elements of each tag are open on `stack`, so a closing tag that matches none costs no walk of it. */
  const open = new Map<string, number>();
  const hiddenNow = () => stack.at(-1)?.hidden ?? false;
  let at = 0;
  let skipping: string | null = null;
  for (const token of htmlTokens(html)) {
    const text = html.slice(at, token.index);
    at = token.end;
    if (!skipping) for (const part of revealInvisible(decodeEntities(text))) push(segments, part.text, part.hidden || hiddenNow());
    const { comment, closing, name: rawTag, attributes = '' } = token;
    if (comment !== undefined) {
      if (comment.trim()) push(segments, `<!-- ${comment.trim()} -->`, true);
      continue;
    }
    if (!rawTag) continue;
    const tag = rawTag.toLowerCase();
    if (skipping) {
      if (closing && tag === skipping) skipping = null;
      continue;
    }
    if (!closing && (tag === 'style' || tag === 'script' || tag === 'head')) {
      skipping = tag;
      continue;
    }
    if (BLOCK.has(tag)) push(segments, '\n', hiddenNow());
    if (closing) {
      const index = (open.get(tag) ?? 0) === 0 ? -1 : stack.findLastIndex((entry) => entry.tag === tag);
      const href = stack[index]?.href;
      if (href) push(segments, ` [link: ${href}]`, stack[index]?.hidden ?? false);
      // Every entry walked above is closed here, so the walks cost at most one step per opened element.
      if (index >= 0) for (const entry of stack.splice(index)) open.set(entry.tag, (open.get(entry.tag) ?? 1) - 1);
      continue;
    }
    if (VOID.has(tag) || attributes.trim().endsWith('/')) continue;
    const hides = HIDING_STYLE.test(attributes) || /\shidden(\s|=|$)/i.test(attributes);
    const href = tag === 'a' ? /\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(attributes) : null;
    const target = href ? decodeEntities(href[1] ?? href[2] ?? href[3] ?? '') : undefined;
    open.set(tag, (open.get(tag) ?? 0) + 1);
    stack.push({ tag, hidden: hiddenNow() || hides, ...(target ? { href: target } : {}) });
  }
  if (!skipping) for (const part of revealInvisible(decodeEntities(html.slice(at)))) push(segments, part.text, part.hidden || hiddenNow());
  return segments.map((segment) => ({ ...segment, text: segment.text.replace(/\n{3,}/g, '\n\n') }));
}
