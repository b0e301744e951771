import libmime from 'libmime';
import { type AddressObject, type HeaderLines, parseAddressHeader, simpleParser } from 'mailparser';
import { addressListText } from './address-text.js';
import { headerRecord } from './header-record.js';
import { originatorLines } from './originator-fields.js';
import type { ParsedMessage } from './parsed-message.js';

export { type AttachmentInfo, type ParsedMessage, TRUNCATED_HEADER } from './parsed-message.js';

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

/** Characters of a raw (unfolded, still encoded) header value read at most: enough for {@link MAX_HEADER_CHARS} decoded ones. */
const MAX_RAW_HEADER_CHARS = 16 * MAX_HEADER_CHARS;

/**
 * Address headers: parsed as addresses with mailparser's `parseAddressHeader`,
 * which decodes encoded words in display names only (RFC 2047 §5: a name that
 * decodes to `"CEO" <ceo@bank.example>` stays a name, it adds no address), and
 * written with {@link addressListText}, so that the stored text reads back as
 * those addresses and no other.
 */
const ADDRESS_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'sender',
  'reply-to',
  'delivered-to',
  'return-path',
  'disposition-notification-to',
]);

/**
 * Headers of which only the first occurrence is kept, as mailparser keeps
 * them: the one it built the message (and its `from`, `subject`) from and
 * the one mail clients show when the header is repeated.
 */
const SINGLE_HEADERS = new Set([
  'message-id',
  'content-id',
  'from',
  'sender',
  'in-reply-to',
  'reply-to',
  'subject',
  'date',
  'content-disposition',
  'content-type',
  'content-transfer-encoding',
  'mime-version',
  'content-description',
  'precedence',
  'errors-to',
  'disposition-notification-to',
]);

function decodeWords(value: string): string {
  try {
    return libmime.decodeWords(value);
  } catch {
    return value;
  }
}

/** `<id>`, as mailparser writes a Message-ID or In-Reply-To (angle brackets added where missing), so dedupe keys stay as they were. */
function messageIdText(value: string): string {
  if (value === '') return '';
  return `${value.startsWith('<') ? '' : '<'}${value}${value.endsWith('>') ? '' : '>'}`;
}

/** The value of one raw header line (`Name: value`, one character per byte): at most `maxChars` characters of it, unfolded, read as UTF-8. */
function lineValue(line: string, maxChars: number): string {
  const colon = line.indexOf(':');
  const binary = (colon < 0 ? '' : line.slice(colon + 1, colon + 1 + maxChars)).replace(/\r?\n[ \t]*|\r[ \t]*/g, ' ').trim();
  return Buffer.from(binary, 'latin1').toString('utf8');
}

/** An address header's value as the postbox writes it ({@link addressListText}). */
const addressValueText = (value: string) => (value === '' ? '' : addressListText(parseAddressHeader(value).value));

/**
 * The text of one raw header line (`Name: value`, folding included, 8-bit
 * bytes as mailparser hands them over: one character per byte): unfolded,
 * read as UTF-8, and its RFC 2047 encoded words decoded. Address headers keep
 * mailparser's text of their addresses (`"Name" <local@domain>`).
 */
function headerLineText(key: string, line: string): string {
  const value = lineValue(line, MAX_RAW_HEADER_CHARS);
  if (ADDRESS_HEADERS.has(key)) return addressValueText(value);
  const text = decodeWords(value).trim();
  return key === 'message-id' || key === 'in-reply-to' ? messageIdText(text) : text;
}

/**
 * The headers of a message as a flat object of strings (CONTRACT.md:
 * `headers` is an object of string to string), built from its raw header
 * lines so that every header keeps its own name and text: `List-Id`,
 * `List-Unsubscribe`, `X-Priority`, `Importance` … as sent (mailparser's
 * parsed headers merge the `List-*` headers into one object and the
 * priority headers into one word). Names are lower-cased, encoded words
 * decoded; a repeated header is one value joined by newlines (only the first
 * occurrence of {@link SINGLE_HEADERS}). At most {@link MAX_HEADERS} names
 * are kept, each value cut to {@link MAX_HEADER_CHARS} characters. A
 * {@link headerRecord}, so that a header named `__proto__` or `constructor`
 * is kept as sent.
 */
export function headersFromLines(lines: HeaderLines): Record<string, string> {
  const flat = headerRecord();
  let kept = 0;
  for (const { key: name, line } of lines) {
    const key = name.toLowerCase();
    if (key === '') continue;
    const seen = key in flat;
    if (!seen && kept >= MAX_HEADERS) continue;
    if (seen && (SINGLE_HEADERS.has(key) || (flat[key] as string).length >= MAX_HEADER_CHARS)) continue;
    const text = headerLineText(key, line);
    flat[key] = storableText((seen ? `${flat[key]}\n${text}` : text).slice(0, MAX_HEADER_CHARS));
    if (!seen) kept += 1;
  }
  return flat;
}

const addressText = (value: AddressObject | AddressObject[] | undefined) =>
  value === undefined ? '' : addressListText([value].flat().flatMap((item) => item.value));

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
  // After mailparser, which refuses a header block over 1 MiB: what is read here is bounded by it.
  const originators = originatorLines(raw);
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
    headers: headersFromLines(parsed.headerLines || []),
    attachments: parsed.attachments.map((attachment) => ({
      filename: attachment.filename === undefined ? null : storableText(attachment.filename),
      content_type: storableText(attachment.contentType),
      size: attachment.size,
      content_id: attachment.contentId === undefined ? null : storableText(attachment.contentId),
    })),
    attachmentChecksums: parsed.attachments.map((attachment) => attachment.checksum),
    truncated,
    originators: {
      from: originators.from.map((line) => addressValueText(lineValue(line, line.length))),
      sender: originators.sender.map((line) => addressValueText(lineValue(line, line.length))),
      bareCr: originators.bareCr,
    },
  };
}
