/**
 * Finds text a person reading the rendered mail would not see but a model
 * reading its text would: hidden HTML, HTML comments, Unicode tag
 * characters, invisible formatting characters and encoded payloads. Regex
 * scans only (no DOM), bounded in input size, so a message costs
 * microseconds to a few hundred microseconds.
 */

import { encodedRuns } from './encoded-runs.js';

/** Zero-width, soft-hyphen, word-joiner, BOM, Mongolian vowel separator and bidi control characters. */
export const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;
/** Unicode tag characters (U+E0000–U+E007F): invisible, and they map one-to-one to ASCII. */
const TAG_CHARS = /[\u{E0000}-\u{E007F}]+/gu;

/**
 * An element whose own style or attributes hide it: `display:none`,
 * `visibility:hidden`, tiny or zero font size, zero opacity, zero height,
 * white text, or the `hidden` attribute. Group 1: the tag name.
 */
const HIDDEN_ELEMENT =
  /<([a-z][a-z0-9]*)\b[^>]*?(?:style\s*=\s*(?:"[^">]*?|'[^'>]*?)(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*(?:0|0?\.\d+|1)(?:px|pt|em|rem|%)?\s*[;"'!]|opacity\s*:\s*0(?:\.0+)?\s*[;"'!]|(?:max-)?height\s*:\s*0(?:px)?\s*[;"'!]|color\s*:\s*(?:#fff(?:fff)?\b|white\b|rgba?\(\s*255\s*,\s*255\s*,\s*255))|\shidden(?=[\s>=/]))[^>]*>/gi;
const COMMENT = /<!--([\s\S]*?)-->/g;
const TAG = /<[^>]*>/g;
const ANCHOR = /<a\b[^>]*?\bhref\s*=\s*["']([^"']{1,2048})["'][^>]*>([\s\S]{0,400}?)<\/a>/gi;
const TEXT_URL = /\bhttps?:\/\/[^\s<>"')\]]{1,2048}/gi;
const LOOKS_LIKE_URL = /^(?:https?:\/\/)?((?:[a-z0-9-]+\.)+[a-z]{2,})(?:[/:?#]\S*)?$/i;
const MARKDOWN_EXFIL = /!\[[^\]]{0,200}\]\(\s*https?:\/\/[^)\s]{1,2048}\?[^)\s]*=/i;

const ENTITIES: Record<string, string> = { nbsp: ' ', amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };

/** Visible text of an HTML fragment: tags dropped, the common entities decoded. */
export function stripTags(html: string): string {
  return html.replace(TAG, ' ').replace(/&(nbsp|amp|lt|gt|quot|apos|#39);/g, (_, name: string) => ENTITIES[name] ?? ' ');
}

/** Elements whose content is not shown (`<head>`, `<title>`, `<style>`, `<script>`, `<template>`). Group 1: the tag name. */
const UNSHOWN_ELEMENT = /<(head|title|style|script|template)\b[^>]*>/gi;
const UNSHOWN_CLOSE: Record<string, RegExp> = {
  head: /<\/head\s*>/gi,
  title: /<\/title\s*>/gi,
  style: /<\/style\s*>/gi,
  script: /<\/script\s*>/gi,
  template: /<\/template\s*>/gi,
};
/** Tags that start a new line when the HTML is shown (block elements, line breaks, table cells). */
const BLOCK_TAG =
  /<\/?(?:p|div|br|hr|li|ul|ol|dl|dt|dd|tr|td|th|table|thead|tbody|tfoot|caption|h[1-6]|blockquote|pre|section|article|header|footer|nav|aside|main|center|address|figure|figcaption|body|html)\b[^>]*>/gi;
const ENTITY = /&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});/gi;
/** Named entities decoded in the visible text of the HTML (others become a space). */
const NAMED_ENTITIES: Record<string, string> = {
  ...ENTITIES,
  rsquo: '\u2019',
  lsquo: '\u2018',
  rdquo: '\u201d',
  ldquo: '\u201c',
  sbquo: '\u201a',
  bdquo: '\u201e',
  laquo: '\u00ab',
  raquo: '\u00bb',
  mdash: '\u2014',
  ndash: '\u2013',
  hellip: '\u2026',
  bull: '\u2022',
  middot: '\u00b7',
  copy: '\u00a9',
  reg: '\u00ae',
  trade: '\u2122',
  euro: '\u20ac',
  pound: '\u00a3',
  yen: '\u00a5',
  cent: '\u00a2',
  deg: '\u00b0',
  times: '\u00d7',
  shy: '',
  zwnj: '',
  zwj: '',
};

/** An entity of {@link ENTITY} decoded (`name` without `&` and `;`); a space when unknown or invalid. */
function decodeEntity(_entity: string, name: string): string {
  if (name.charCodeAt(0) !== 0x23) return NAMED_ENTITIES[name.toLowerCase()] ?? ' ';
  const code = name.charCodeAt(1) === 0x78 || name.charCodeAt(1) === 0x58 ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
  return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : ' ';
}

/**
 * The text a person sees in `html`: the spans `dropped` (`[start, end)`
 * pairs: hidden elements, comments) and the content of unshown elements
 * left out, tags dropped (block tags become line breaks), entities decoded,
 * tag characters removed (when `withTagChars`). Invisible formatting
 * characters are left in (they separate words; `html-only-text.ts` drops
 * them from what it adds).
 */
function shownText(html: string, dropped: number[], withTagChars: boolean): string {
  /**
   * Per tag name, the close found by its last search (−1: none after where
   * that search started). Opens come in order, so a close found at or after
   * an open's end is also the first close after it: the HTML is searched at
   * most once per tag name, and many opens (`<head><head>…`, an unclosed
   * `<script>`) cost one pass rather than a pass each.
   */
  const closeAt = new Map<string, number>();
  for (const match of html.matchAll(UNSHOWN_ELEMENT)) {
    const name = (match[1] ?? '').toLowerCase();
    const close = UNSHOWN_CLOSE[name];
    if (!close) continue;
    const start = match.index ?? 0;
    const contentStart = start + match[0].length;
    let end = closeAt.get(name);
    if (end === undefined || (end !== -1 && end < contentStart)) {
      close.lastIndex = contentStart;
      end = close.exec(html)?.index ?? -1;
      close.lastIndex = 0;
      closeAt.set(name, end);
    }
    // Unclosed: its content is kept (scored as shown rather than not at all).
    if (end !== -1) dropped.push(start, end);
  }
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i + 1 < dropped.length; i += 2) ranges.push([dropped[i] ?? 0, dropped[i + 1] ?? 0]);
  ranges.sort((a, b) => a[0] - b[0]);
  let shown = '';
  let at = 0;
  for (const [start, end] of ranges) {
    if (start > at) shown += `${html.slice(at, start)} `;
    if (end > at) at = end;
  }
  shown += html.slice(at);
  shown = shown.replace(BLOCK_TAG, '\n').replace(TAG, ' ').replace(ENTITY, decodeEntity);
  return withTagChars ? shown.replace(TAG_CHARS, '') : shown;
}

const wordCount = (text: string) => (text.match(/[A-Za-z]{2,}/g) ?? []).length;

/** Characters after the start tag of a hidden element read as its content at most. */
const HIDDEN_INNER_MAX = 2_000;
/**
 * Characters of hidden elements' content read per message at most while
 * they nest: the content of an element inside another hidden element is read
 * again with its own (up to {@link HIDDEN_INNER_MAX} characters each), so
 * 200,000 characters of nested hidden `<div>`s read 15 million. Past this,
 * an element that starts in content already read is still left out of the
 * shown text but neither read again nor counted; ordinary mail stays far
 * below it.
 */
export const HIDDEN_CONTENT_BUDGET = 1_000_000;

/**
 * Characters of HTML searched for the closes of hidden elements per message
 * at most. Each search reads at most {@link HIDDEN_INNER_MAX} characters,
 * and the searches for elements of one name read the HTML about once, but
 * elements of many names (`<t1 hidden>…<t2 hidden>…`) each search anew: 1 MiB
 * of them read 130 million characters (0.8 s). Past this, a hidden element
 * whose close is not known is taken as shown (its content stays in the
 * shown text, which is scored: nothing is left unread); ordinary mail
 * searches a few thousand characters.
 */
export const HIDDEN_CLOSE_SEARCH_BUDGET = 2_000_000;

/** Per tag name, what the searches for its close learnt: the close found last (−1: none yet), and that no close starts between the last search's start and `clearTo`. */
interface CloseSearch {
  found: number;
  clearTo: number;
}

/** The closes of hidden elements searched in one HTML part: per tag name what was learnt, and the characters that may still be searched. */
interface CloseSearches {
  byTag: Map<string, CloseSearch>;
  budget: number;
}

/**
 * Where the content of a hidden element whose start tag (name `tag`) ends
 * at `start` ends: at its first `</tag` (what `indexOf` finds: `</p` also
 * matches `</pre`), at most {@link HIDDEN_INNER_MAX} characters on; −1 when
 * that is unknown because the search budget is spent. Searches at most that
 * far, and not again where an earlier search for the same name looked
 * (unclosed `<p hidden>`s, each searched to the end, took 0.9 s for
 * 200,000 characters, 15 s for 1 MiB).
 */
function hiddenContentEnd(html: string, tag: string, start: number, searches: CloseSearches): number {
  const limit = start + HIDDEN_INNER_MAX;
  const close = `</${tag}`;
  let known = searches.byTag.get(tag);
  if (known === undefined) {
    known = { found: -1, clearTo: 0 };
    searches.byTag.set(tag, known);
  }
  if (known.found >= start) return Math.min(known.found, limit);
  const from = Math.max(start, known.clearTo);
  if (from >= limit) return limit;
  if (searches.budget <= 0) return -1;
  const at = html.slice(from, limit + close.length - 1).indexOf(close);
  searches.budget -= (at === -1 ? limit - from : at) + close.length;
  if (at === -1) {
    known.clearTo = limit;
    return limit;
  }
  known.found = from + at;
  return known.found;
}

/** What was found hidden in a message. */
export interface HiddenContent {
  /** The text with invisible characters and tag characters removed. */
  cleanText: string;
  /** Invisible formatting characters found (zero-width, bidi controls …). */
  invisibleChars: number;
  /** Unicode tag characters found. */
  tagChars: number;
  /** Hidden HTML elements holding at least three words. */
  hiddenElements: number;
  /** HTML comments holding at least four words (Outlook conditional comments excluded). */
  textComments: number;
  /** Base64 or hex runs that decode to readable text. */
  encodedTexts: number;
  /** Links whose visible text names another host than the one they go to. */
  mismatchedLinks: number;
  /** Links to IP literals, with user-info (`https://bank.test@evil.test`), punycode hosts, or `javascript:`/`data:` URLs. */
  trickLinks: number;
  /** Markdown images whose URL carries a query (a way to make a model leak data by rendering it). */
  markdownExfil: number;
  /** Everything hidden, decoded, joined by newlines (examined for instructions by the caller). */
  hiddenText: string;
  /**
   * The text of the HTML a person sees: without the hidden elements and
   * comments counted here, `<head>`, `<title>`, `<style>`, `<script>` and
   * `<template>` content, tags (block tags become line breaks) and tag
   * characters; entities decoded; invisible formatting characters kept.
   * `''` without HTML.
   */
  htmlShownText: string;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url.includes('://') ? url : `http://${url}`).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return null;
  }
}

function isTrickUrl(raw: string): boolean {
  const lower = raw.trim().toLowerCase();
  if (/^(?:javascript|data|vbscript|file):/.test(lower)) return true;
  if (!/^https?:\/\//.test(lower)) return false;
  const authority = lower.slice(lower.indexOf('//') + 2).split(/[/?#]/, 1)[0] ?? '';
  if (authority.includes('@')) return true;
  const host = authority.replace(/:\d+$/, '');
  return /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host) || host.startsWith('[') || /(?:^|\.)xn--/.test(host);
}

/** Decodes a base64 or hex run; returns the text when it is mostly readable ASCII, else `null`. */
function readableDecoding(run: string, encoding: 'base64' | 'hex'): string | null {
  const bytes = Buffer.from(run, encoding);
  if (bytes.length < 16) return null;
  let readable = 0;
  let letters = 0;
  for (const byte of bytes) {
    if ((byte >= 0x20 && byte < 0x7f) || byte === 0x0a || byte === 0x0d || byte === 0x09) readable += 1;
    if ((byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte === 0x20) letters += 1;
  }
  if (readable / bytes.length < 0.95 || letters / bytes.length < 0.6) return null;
  return bytes.toString('latin1');
}

/**
 * `html` with each `<` that does not open a tag written as `&lt;`: one
 * followed by another `<` before any `>`, an unclosed `<!--`, or one with no
 * `>` after it. Browsers show those as text too. Every tag pattern here
 * (`<…[^>]*>`) then scans from a `<` at most to the `>` that closes it, so
 * the patterns together read the HTML a bounded number of times: 200 KB of
 * bare `<` took 16 s, each failed match scanning to the end. One pass.
 */
function strayBracketsAsText(html: string): string {
  let out = '';
  let copied = 0;
  let open = -1;
  let commentEnd: number | null = null;
  const asText = (at: number) => {
    out += `${html.slice(copied, at)}&lt;`;
    copied = at + 1;
  };
  for (let i = 0; i < html.length; i += 1) {
    const code = html.charCodeAt(i);
    if (code === 0x3c) {
      if (open !== -1) asText(open);
      open = -1;
      if (html.startsWith('<!--', i)) {
        if (commentEnd === null || (commentEnd !== -1 && commentEnd < i)) commentEnd = html.indexOf('-->', i + 4);
        if (commentEnd === -1) asText(i);
        else i = commentEnd + 2;
        continue;
      }
      open = i;
    } else if (code === 0x3e) open = -1;
  }
  if (open !== -1) asText(open);
  return copied === 0 ? html : out + html.slice(copied);
}

/**
 * Scans a message's text and HTML for hidden content.
 * @param text subject and plain-text body.
 * @param html the HTML body, or `null`.
 */
export function findHiddenContent(text: string, html: string | null): HiddenContent {
  const hidden: string[] = [];
  let tagChars = 0;
  const withoutTags = text.replace(TAG_CHARS, (run) => {
    let decoded = '';
    for (const char of run) {
      const code = (char.codePointAt(0) ?? 0xe0000) - 0xe0000;
      tagChars += 1;
      if (code >= 0x20 && code < 0x7f) decoded += String.fromCharCode(code);
    }
    hidden.push(decoded);
    return '';
  });
  let invisibleChars = 0;
  const cleanText = withoutTags.replace(INVISIBLE, () => {
    invisibleChars += 1;
    return '';
  });

  let hiddenElements = 0;
  let textComments = 0;
  let mismatchedLinks = 0;
  let trickLinks = 0;
  let htmlShownText = '';
  if (html) {
    html = strayBracketsAsText(html);
    /** `[start, end)` pairs of the HTML that are not shown: hidden elements and comments. */
    const dropped: number[] = [];
    if (TAG_CHARS.test(html)) {
      html.replace(TAG_CHARS, (run) => {
        tagChars += [...run].length;
        hidden.push([...run].map((char) => String.fromCharCode(((char.codePointAt(0) ?? 0xe0000) - 0xe0000) & 0x7f)).join(''));
        return '';
      });
    }
    const searches: CloseSearches = { byTag: new Map(), budget: HIDDEN_CLOSE_SEARCH_BUDGET };
    let contentRead = 0;
    let readTo = 0;
    for (const match of html.matchAll(HIDDEN_ELEMENT)) {
      const tag = (match[1] ?? '').toLowerCase();
      const start = (match.index ?? 0) + match[0].length;
      const innerEnd = hiddenContentEnd(html, tag, start, searches);
      if (innerEnd === -1) continue;
      dropped.push(match.index ?? 0, innerEnd);
      if (contentRead >= HIDDEN_CONTENT_BUDGET && start < readTo) continue;
      contentRead += innerEnd - start;
      readTo = Math.max(readTo, innerEnd);
      const inner = stripTags(html.slice(start, innerEnd));
      if (wordCount(inner) >= 3) {
        hiddenElements += 1;
        hidden.push(inner);
      }
    }
    for (const match of html.matchAll(COMMENT)) {
      dropped.push(match.index ?? 0, (match.index ?? 0) + match[0].length);
      const body = (match[1] ?? '').trim();
      if (body.startsWith('[if') || body.startsWith('<![endif]') || body.startsWith('[endif')) continue;
      if (wordCount(body) >= 4) {
        textComments += 1;
        hidden.push(stripTags(body));
      }
    }
    for (const match of html.matchAll(ANCHOR)) {
      const href = match[1] ?? '';
      if (isTrickUrl(href)) trickLinks += 1;
      const shown = stripTags(match[2] ?? '').trim();
      const shownUrl = LOOKS_LIKE_URL.exec(shown);
      if (shownUrl && /^https?:\/\//i.test(href)) {
        const shownHost = hostOf(shown);
        const target = hostOf(href);
        if (shownHost && target && shownHost !== target && !target.endsWith(`.${shownHost}`)) mismatchedLinks += 1;
      }
    }
    htmlShownText = shownText(html, dropped, tagChars > 0);
  }

  for (const match of cleanText.matchAll(TEXT_URL)) if (isTrickUrl(match[0])) trickLinks += 1;
  const markdownExfil = MARKDOWN_EXFIL.test(cleanText) ? 1 : 0;

  let encodedTexts = 0;
  const runs = encodedRuns(cleanText.replace(TEXT_URL, ' '));
  for (const run of runs.base64) {
    if (!/[A-Z]/.test(run) || !/[a-z]/.test(run)) continue;
    const decoded = readableDecoding(run, 'base64');
    if (decoded) {
      encodedTexts += 1;
      hidden.push(decoded);
    }
  }
  for (const run of runs.hex) {
    const decoded = readableDecoding(run.length % 2 === 0 ? run : run.slice(0, -1), 'hex');
    if (decoded) {
      encodedTexts += 1;
      hidden.push(decoded);
    }
  }

  return {
    cleanText,
    invisibleChars,
    tagChars,
    hiddenElements,
    textComments,
    encodedTexts,
    mismatchedLinks,
    trickLinks,
    markdownExfil,
    hiddenText: hidden.join('\n'),
    htmlShownText,
  };
}
