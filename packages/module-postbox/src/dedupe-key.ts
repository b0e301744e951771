import { createHash } from 'node:crypto';
import { senderAddress } from './addresses.js';
import type { AttachmentInfo } from './parsed-message.js';

/** What an agent is shown of an inbound message, as stored (bodies already cut to `maxBodyBytes`). */
export interface DedupeContent {
  /** The `From` value; only its sender address counts (see `senderAddress`). */
  from: string;
  subject: string;
  body: string;
  html?: string | null | undefined;
  attachments?: readonly AttachmentInfo[] | undefined;
  /** SHA-256 (hex) of each attachment's bytes, where the bytes were read (SMTP); /ingest has metadata only. */
  attachmentChecksums?: readonly string[] | undefined;
}

/** SHA-256 (hex) of `parts`, each as JSON on a line of its own, so that different parts never hash the same text. */
function digestOf(parts: readonly unknown[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(JSON.stringify(part)).update('\n');
  return hash.digest('hex');
}

/**
 * The SHA-256 of what an agent would see of a message: sender address,
 * subject, text and HTML bodies, each attachment's name, type, size and
 * content id, and, where known, each attachment's bytes (as their SHA-256):
 * a message whose attachment differs in content only (an invoice with
 * another IBAN, the same size) is another message. Not of the raw bytes:
 * relays add `Received` headers to a retransmission and a re-sending client
 * picks new MIME boundaries. Computed once per message, however many
 * recipients it has.
 */
export function contentDigest(content: DedupeContent): string {
  const parts: unknown[] = [
    senderAddress(content.from),
    content.subject,
    content.body,
    content.html ?? null,
    (content.attachments ?? []).map((item) => [item.filename, item.content_type, item.size, item.content_id]),
  ];
  // Only when there are some, so that the keys of messages without attachments stay those stored so far.
  if (content.attachmentChecksums?.length) parts.push(content.attachmentChecksums);
  return digestOf(parts);
}

/**
 * A message's identity for idempotency (`postbox_messages.dedupe_key`,
 * unique): the SHA-256 of its recipient, its Message-ID and its
 * {@link contentDigest}. A retransmission of a message gets the same key;
 * another message that reuses its Message-ID (one a stranger sent first to
 * suppress the real one, say) gets its own and is stored. The `v2` marker
 * keeps these keys apart from those of earlier versions (recipient and
 * Message-ID only).
 */
export function dedupeKeyOf(recipient: string, messageId: string, digest: string): string {
  return digestOf(['v2', recipient, messageId.trim(), digest]);
}
