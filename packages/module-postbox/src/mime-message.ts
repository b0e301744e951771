import { type AddressObject, type HeaderValue, simpleParser } from 'mailparser';
import { headerRecord } from './header-record.js';

/** Headers kept per message at most, and characters per header value. */
const MAX_HEADERS = 200;
const MAX_HEADER_CHARS = 8_192;
/** Characters of the subject and of the `From` header kept (the subject bound of /ingest). */
const MAX_SUBJECT_CHARS = 16_384;
/**
 * Longest HTML body turned into text, in characters (issue #11: `html-to-text`
 * reads about 3 MB/s). A longer HTML-only message keeps its HTML and gets an
 * empty text body.
 */
export const MAX_HTML_TO_TEXT_CHARS = 1_048_576;

/**
 * Header the postbox adds to a message whose text or HTML body was cut to
 * `postbox.maxBodyBytes` when it was stored (`body` and/or `html`, comma
 * separated); the raw message at `mime_ref` keeps all of it. A copy a sender
 * wrote is dropped.
 */
export const TRUNCATED_HEADER = 'x-agentinfra-truncated';

/** An attachment as listed on a message (its bytes stay in the raw MIME). */
export interface AttachmentInfo {
  filename: string | null;
  content_type: string;
  size: number;
  content_id: string | null;
}

/** What the postbox keeps of a parsed RFC 5322 message. */
export interface ParsedMessage {
  /** The `From` header as written (`"Shop" <news@shop.test>`), or empty. */
  from: string;
  subject: string;
  /** The text/plain body; for HTML-only mail, the text mailparser derives from the HTML. */
  text: string;
  /** The text/html body, or `null`. */
  html: string | null;
  /** Lower-case header name → decoded value; repeated headers joined by newlines. */
  headers: Record<string, string>;
  attachments: AttachmentInfo[];
  /**
   * The SHA-256 (hex) of each attachment's decoded bytes, in the order of
   * `attachments`: what tells two messages apart whose attachments differ in
   * content only (see `contentDigest`). Not stored.
   */
  attachmentChecksums: string[];
  /** Which of `text` (`body`) and `html` were cut to the byte limit, in that order. */
  truncated: Array<'body' | 'html'>;
}

/**
 * `text` cut to at most `maxBytes` bytes of UTF-8, at a character boundary,
 * or `null` when it already fits.
 */
function cutUtf8(text: string, maxBytes: number): string | null {
  // Each UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair: 4 for 2).
  if (text.length * 3 <= maxBytes) return null;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return null;
  let end = maxBytes;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

/** NUL, and a UTF-16 surrogate without its pair. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what this finds.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` as every store can keep it: NUL (which PostgreSQL's text columns
 * refuse, so a mail holding one was answered 451 forever) and lone
 * surrogates become U+FFFD, as a lenient decoder shows them anyway.
 */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\ufffd');
}

function headerText(value: HeaderValue): string {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toUTCString();
  if (Array.isArray(value)) return value.map((item) => headerText(item as HeaderValue)).join(', ');
  if (typeof value === 'object' && value !== null) {
    if ('text' in value && typeof value.text === 'string') return value.text;
    if ('value' in value && typeof value.value === 'string') {
      const params = 'params' in value && value.params ? Object.entries(value.params as Record<string, string>) : [];
      return [value.value, ...params.map(([key, param]) => `${key}=${param}`)].join('; ');
    }
  }
  return String(value);
}

/**
 * Headers as a flat object of strings (CONTRACT.md: `headers` is an object
 * of string to string), a {@link headerRecord} so that a header named
 * `__proto__` or `constructor` is kept as sent.
 */
export function flattenHeaders(headers: Map<string, HeaderValue>): Record<string, string> {
  const flat = headerRecord();
  let kept = 0;
  for (const [name, value] of headers) {
    if (kept >= MAX_HEADERS) break;
    const key = name.toLowerCase();
    const text = storableText(headerText(value).slice(0, MAX_HEADER_CHARS));
    flat[key] = key in flat ? `${flat[key]}\n${text}` : text;
    kept += 1;
  }
  return flat;
}

const addressText = (value: AddressObject | AddressObject[] | undefined) =>
  value === undefined ? '' : Array.isArray(value) ? value.map((item) => item.text).join(', ') : value.text;

/**
 * Parses a raw message with mailparser (`simpleParser`): decoded subject,
 * text and HTML bodies, headers (incl. `message-id`) and the list of
 * attachments. Links in text are not rewritten and embedded images are not
 * inlined, so the HTML is the sender's; of each attachment its metadata and
 * the SHA-256 of its bytes are kept, not the bytes. The subject and `From` are cut to 16,384 characters;
 * HTML over {@link MAX_HTML_TO_TEXT_CHARS} is not turned into text; the text
 * and HTML bodies are each cut to `maxBodyBytes` bytes of UTF-8 (the bound of
 * /ingest: a 10 MiB mail's text otherwise took SQLite 20–80 ms to store, on
 * the event loop, #11). This is
 * seconds of CPU for a large message: the server calls it in a worker thread
 * (`createMimeParserPool`).
 * @throws Error from mailparser when the input cannot be read at all (it is lenient with malformed mail).
 */
export async function parseMimeMessage(raw: Buffer, options: { maxBodyBytes: number }): Promise<ParsedMessage> {
  const parsed = await simpleParser(raw, {
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
    keepCidLinks: true,
    checksumAlgo: 'sha256',
    maxHtmlLengthToParse: MAX_HTML_TO_TEXT_CHARS,
  });
  const truncated: ParsedMessage['truncated'] = [];
  const cut = (part: 'body' | 'html', whole: string) => {
    const text = storableText(whole);
    const shorter = cutUtf8(text, options.maxBodyBytes);
    if (shorter === null) return text;
    truncated.push(part);
    return shorter;
  };
  return {
    from: storableText(addressText(parsed.from).slice(0, MAX_SUBJECT_CHARS)),
    subject: storableText((parsed.subject ?? '').slice(0, MAX_SUBJECT_CHARS)),
    text: cut('body', parsed.text ?? ''),
    html: typeof parsed.html === 'string' ? cut('html', parsed.html) : null,
    headers: flattenHeaders(parsed.headers),
    attachments: parsed.attachments.map((attachment) => ({
      filename: attachment.filename === undefined ? null : storableText(attachment.filename),
      content_type: storableText(attachment.contentType),
      size: attachment.size,
      content_id: attachment.contentId === undefined ? null : storableText(attachment.contentId),
    })),
    attachmentChecksums: parsed.attachments.map((attachment) => attachment.checksum),
    truncated,
  };
}
