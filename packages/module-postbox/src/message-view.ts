import { isoTimestamp } from '@agentinfra/core';
import { z } from 'zod';
import { bareAddresses } from './bare-addresses.js';
import { type AttachmentInfo, TRUNCATED_HEADER } from './parsed-message.js';
import { INJECTION_HEADER } from './scoring/injection-headers.js';

/**
 * Largest `seq` of `postbox_messages` (an `increments` column: a 32-bit
 * integer on PostgreSQL), the bound of the list cursors that carry one; a
 * larger value in a forged cursor would reach PostgreSQL as an out-of-range
 * parameter.
 */
export const MAX_SEQ = 2_147_483_647;

/** A row of `postbox_messages`. */
export interface MessageRow {
  seq: number;
  id: string;
  agent_id: string;
  direction: 'in' | 'out';
  folder: string;
  to_address: string;
  from_address: string;
  subject: string;
  body: string;
  html: string | null;
  headers: string;
  attachments: string;
  dedupe_key: string | null;
  mime_ref: string | null;
  mime_owned: boolean | number;
  injection_score: number;
  quarantined: boolean | number;
  read_at: number | string | null;
  status: MessageStatus;
  error: string | null;
  created_at: number | string;
  updated_at: number | string;
  sent_at: number | string | null;
}

/** `received` for inbound mail; `queued` → `sent` | `failed` for outbound mail (CONTRACT.md). */
export type MessageStatus = 'received' | 'queued' | 'sent' | 'failed';

/** A message as /list returns it. */
export const messageViewSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  direction: z.enum(['in', 'out']),
  folder: z.string(),
  to: z.string(),
  from: z.string(),
  subject: z.string(),
  body: z.string(),
  html: z.string().nullable(),
  headers: z.record(z.string(), z.string()),
  attachments: z.array(
    z.object({ filename: z.string().nullable(), content_type: z.string(), size: z.number(), content_id: z.string().nullable() }),
  ),
  mime_ref: z.string().nullable(),
  injection_score: z.number(),
  quarantined: z.boolean(),
  withheld: z.boolean(),
  read: z.boolean(),
  status: z.enum(['received', 'queued', 'sent', 'failed']),
  error: z.string().nullable(),
  created_at: z.string(),
  sent_at: z.string().nullable(),
});
export type MessageView = z.infer<typeof messageViewSchema>;

const toMs = (value: number | string) => Number(value);

/** A media type reduced to `type/subtype` of RFC 6838 characters (parameters are sender text), else `application/octet-stream`. */
function mediaTypeOnly(contentType: string): string {
  const bare = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/.test(bare) ? bare : 'application/octet-stream';
}

/**
 * The /list view of a row. Of a quarantined message, unless `reveal`, all
 * text its sender controls is withheld (`withheld: true`), so an agent that
 * lists its mail never feeds hostile text to its model by accident: subject,
 * bodies and attachment names are empty, `from` and `to` are bare addresses
 * (no display names), and of the headers only {@link withheldHeaders} remain.
 */
export function messageView(row: MessageRow, reveal: boolean): MessageView {
  const quarantined = Boolean(row.quarantined);
  const withheld = quarantined && !reveal;
  const attachments = JSON.parse(row.attachments) as AttachmentInfo[];
  return {
    id: row.id,
    agent_id: row.agent_id,
    direction: row.direction,
    folder: row.folder,
    to: withheld ? bareAddresses(row.to_address) : row.to_address,
    from: withheld ? bareAddresses(row.from_address) : row.from_address,
    subject: withheld ? '' : row.subject,
    body: withheld ? '' : row.body,
    html: withheld ? null : row.html,
    headers: withheld
      ? withheldHeaders(JSON.parse(row.headers) as Record<string, string>)
      : (JSON.parse(row.headers) as Record<string, string>),
    attachments: withheld
      ? attachments.map((attachment) => ({
          ...attachment,
          filename: null,
          content_id: null,
          content_type: mediaTypeOnly(attachment.content_type),
        }))
      : attachments,
    mime_ref: row.mime_ref,
    injection_score: Number(row.injection_score),
    quarantined,
    withheld,
    read: row.read_at !== null,
    status: row.status,
    error: row.error,
    created_at: isoTimestamp(toMs(row.created_at)),
    sent_at: row.sent_at === null ? null : isoTimestamp(toMs(row.sent_at)),
  };
}

/** Headers only the postbox writes (a sender's copies are dropped on ingest): kept as they are on withheld messages. */
const SERVER_HEADERS = new Set([INJECTION_HEADER, TRUNCATED_HEADER]);
/** Address headers kept on withheld messages as their bare addresses only (see {@link bareAddresses}). */
const ADDRESS_HEADERS = new Set(['from', 'to', 'cc', 'return-path']);

/**
 * The headers of a withheld message: the postbox's own `x-agentinfra-injection`
 * (scorer and signal names, so that a reviewer sees why it was quarantined)
 * and `x-agentinfra-truncated`, and `from`, `to`, `cc` and `return-path`
 * reduced to bare addresses (left out when none remains). Every other header
 * is left out: even `message-id`, `date`, `received` and `content-type` are
 * text a sender writes.
 */
function withheldHeaders(headers: Record<string, string>): Record<string, string> {
  const kept: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (SERVER_HEADERS.has(name)) kept.push([name, value]);
    else if (ADDRESS_HEADERS.has(name)) {
      const addresses = bareAddresses(value);
      if (addresses !== '') kept.push([name, addresses]);
    }
  }
  return Object.fromEntries(kept);
}

/**
 * What webhooks carry about a message: no body; of a quarantined message no
 * subject, and `from` and `to` as bare addresses (as a withheld view shows them).
 */
export function eventData(view: MessageView) {
  return {
    id: view.id,
    agent_id: view.agent_id,
    direction: view.direction,
    folder: view.folder,
    to: view.quarantined ? bareAddresses(view.to) : view.to,
    from: view.quarantined ? bareAddresses(view.from) : view.from,
    subject: view.quarantined ? '' : view.subject,
    injection_score: view.injection_score,
    quarantined: view.quarantined,
    status: view.status,
    error: view.error,
    created_at: view.created_at,
  };
}
