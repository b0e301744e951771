import { type AddressObject, type HeaderValue, simpleParser } from 'mailparser';

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

/** Headers as a flat object of strings (CONTRACT.md: `headers` is an object of string to string). */
export function flattenHeaders(headers: Map<string, HeaderValue>): Record<string, string> {
  const flat: Record<string, string> = {};
  let kept = 0;
  for (const [name, value] of headers) {
    if (kept >= MAX_HEADERS) break;
    const key = name.toLowerCase();
    const text = headerText(value).slice(0, MAX_HEADER_CHARS);
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
 * inlined, so the HTML is the sender's; attachments are not hashed (only
 * their size is kept). The subject and `From` are cut to 16,384 characters;
 * HTML over {@link MAX_HTML_TO_TEXT_CHARS} is not turned into text. This is
 * seconds of CPU for a large message: the server calls it in a worker thread
 * (`createMimeParserPool`).
 * @throws Error from mailparser when the input cannot be read at all (it is lenient with malformed mail).
 */
export async function parseMimeMessage(raw: Buffer): Promise<ParsedMessage> {
  const parsed = await simpleParser(raw, {
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
    keepCidLinks: true,
    checksumAlgo: false,
    maxHtmlLengthToParse: MAX_HTML_TO_TEXT_CHARS,
  });
  return {
    from: addressText(parsed.from).slice(0, MAX_SUBJECT_CHARS),
    subject: (parsed.subject ?? '').slice(0, MAX_SUBJECT_CHARS),
    text: parsed.text ?? '',
    html: typeof parsed.html === 'string' ? parsed.html : null,
    headers: flattenHeaders(parsed.headers),
    attachments: parsed.attachments.map((attachment) => ({
      filename: attachment.filename ?? null,
      content_type: attachment.contentType,
      size: attachment.size,
      content_id: attachment.contentId ?? null,
    })),
  };
}
