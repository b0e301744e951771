import { createHash } from 'node:crypto';
import type { AttachmentInfo } from './parsed-message.js';

/** Hex characters of a message's identity kept in a generated Message-ID (128 bits). */
const ID_HEX_CHARS = 32;

/** What an /ingest request says about a message, apart from its recipient. */
export interface IngestedFields {
  from: string;
  subject: string;
  body: string;
  html?: string | null | undefined;
  /** Header names lower-case, as stored. */
  headers: Readonly<Record<string, string>>;
  mime_ref?: string | null | undefined;
  attachments?: readonly AttachmentInfo[] | undefined;
}

/**
 * The identity (SHA-256, hex) of a message handed over by /ingest, as the
 * SHA-256 of the raw bytes is that of SMTP mail: every field of the request
 * but the recipient (`from`, `subject`, `body`, `html`, every header in name
 * order, `mime_ref`, `attachments`), so that each recipient's copy and a
 * retried request get the same one.
 */
export function ingestedIdentity(fields: IngestedFields): string {
  const headers = Object.entries(fields.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const parts = [
    fields.from,
    fields.subject,
    fields.body,
    fields.html ?? null,
    headers,
    fields.mime_ref ?? null,
    (fields.attachments ?? []).map((item) => [item.filename, item.content_type, item.size, item.content_id]),
  ];
  const hash = createHash('sha256');
  for (const part of parts) hash.update(JSON.stringify(part)).update('\n');
  return hash.digest('hex');
}

/**
 * The Message-ID the postbox gives a message that arrived without one (RFC
 * 5322 §3.6.4: it SHOULD have one, and MTAs commonly add it):
 * `<first 32 hex characters of identity@mailDomain>`. Derived from the
 * message, not random, so every recipient's copy and every retransmission of
 * the same bytes (or the same /ingest request) carry the same id: it keys
 * de-duplication (see `dedupe-key.ts`) and is what a reply's `in_reply_to`
 * names.
 * @param identity SHA-256 hex of the message as received: the raw bytes (SMTP) or {@link ingestedIdentity} (/ingest).
 * @param mailDomain the served mail domain (lower-case), the host that generated the id.
 */
export function generatedMessageId(identity: string, mailDomain: string): string {
  return `<${identity.slice(0, ID_HEX_CHARS)}@${mailDomain}>`;
}
