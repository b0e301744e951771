/**
 * What the postbox keeps of a parsed message, without the parser: importing
 * this file loads neither mailparser nor libmime (with iconv-lite and
 * encoding-japanese about 0.3 s of CPU), which only `mime-message.ts` does,
 * in the MIME parser's worker threads or on the first {@link parseMimeMessage}.
 */

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
  /**
   * The `From` header's mailboxes (`"Shop" <news@shop.test>`, see `addressListText` in `address-text.ts`), or
   * empty when it names none (an entry with a display name only names none).
   */
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
  /**
   * The mailboxes of every `From` and of every `Sender` field of the header, one
   * text per field in order (as `from`, but not cut), found as `originator-fields.ts`
   * reads the header: a field mailparser does not read included. What the SMTP path
   * checks (RFC 5322 §3.6 allows one `From` and at most one `Sender`), with `bareCr`:
   * whether that header has a CR not followed by LF, where other readers find fields
   * these lists do not hold (see `OriginatorLines`). Not stored.
   */
  originators: { from: string[]; sender: string[]; bareCr: boolean };
}

/**
 * Parses a raw message as `parseMimeMessage` of `mime-message.ts` does
 * (mailparser; subject, bodies, headers, attachments, bodies cut to
 * `maxBodyBytes` bytes of UTF-8), loading that file on the first call.
 * Seconds of CPU for a large message: the server parses in worker threads
 * (`createMimeParserPool`).
 * @throws Error from mailparser when the input cannot be read at all.
 */
export async function parseMimeMessage(raw: Buffer, options: { maxBodyBytes: number }): Promise<ParsedMessage> {
  const parser = await import('./mime-message.js');
  return parser.parseMimeMessage(raw, options);
}
