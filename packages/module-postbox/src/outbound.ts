import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import {
  dependencyFailure,
  InputError,
  JobInterruptedError,
  JobLeaseLostError,
  NotAllowedError,
  newId,
  PayloadTooLargeError,
  RateLimitError,
} from '@agentinfra/core';
import { z } from 'zod';
import { namesAnotherAddress, normalizeAddress, parseMailboxes } from './addresses.js';
import { MIME_PREFIX, type RawDelivery } from './inbound.js';
import { composeMessage, createMailRelay, type MailRelay, RelayError } from './mail-relay.js';
import { lockMessageOrder } from './message-order-lock.js';
import { eventData, type MessageRow, messageView } from './message-view.js';
import { MalformedMessageError } from './mime-parser-pool.js';
import { SENT } from './rules.js';
import type { SendRequest, SendResponse } from './schemas.js';
import type { PostboxDeps } from './service-deps.js';
import type { Webhooks } from './webhooks.js';

/** Name of the durable job that delivers one outbound message: to local recipients' mailboxes and to the relay. */
export const SEND_JOB = 'postbox.send';
/** Recipients of one outbound message at most. */
export const MAX_RECIPIENTS = 50;
const DAY_MS = 86_400_000;

const sendJobPayloadSchema = z.object({ message_id: z.string() });

const fieldError = (path: string, message: string) => new InputError(`Invalid ${path}.`, { fields: [{ path, message }] });

/** How far one /send got in storing its message. */
interface StoreAttempt {
  /** Whether the transaction's COMMIT was sent: from then on, a failure may still have stored the message. */
  commitSent: boolean;
}

/**
 * Whether a store that failed with `error` surely stored nothing: it failed
 * before its COMMIT was sent, or with an error of a dependency that did
 * nothing (`dependencyFailure`). A COMMIT whose answer was lost may have
 * stored the message, so nothing is undone then.
 */
const storedNothing = (attempt: StoreAttempt, error: unknown) => !attempt.commitSent || dependencyFailure(error) !== null;

/**
 * The RCPT TO addresses of a queued outbound message: the mailboxes of its
 * To header as the agent wrote them, with only the domain lower-cased (RFC
 * 5321 §2.4: a local part's case is the destination's to interpret), each
 * once. Falls back to the stored, lower-cased `to_address` list.
 */
function envelopeRecipients(row: MessageRow): string[] {
  const to = (JSON.parse(row.headers) as Record<string, string | undefined>).to;
  const mailboxes = to === undefined ? null : parseMailboxes(to);
  if (!mailboxes) return row.to_address.split(', ');
  const seen = new Set<string>();
  const addresses: string[] = [];
  for (const { address } of mailboxes) {
    const at = address.lastIndexOf('@');
    const envelope = `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
    if (seen.has(normalizeAddress(envelope))) continue;
    seen.add(normalizeAddress(envelope));
    addresses.push(envelope);
  }
  return addresses;
}

/**
 * Outbound mail: /send (quota, ownership of `from`) and the delivery job,
 * which stores the copies of recipients of this postbox itself and hands the
 * others to the relay.
 */
export function createOutbound(
  deps: PostboxDeps & {
    webhooks: Webhooks;
    /** Whether mail for a bare, lower-case address is delivered to an agent of this postbox (see `service.ts`). */
    delivered: (address: string) => Promise<boolean>;
    /** Stores a sent message's raw MIME for recipients of this postbox (`ingestSent` in `inbound.ts`). @returns the stored ids. */
    storeLocal: (delivery: RawDelivery) => Promise<string[]>;
  },
) {
  const knex = () => deps.sql.knex;
  const relayUrl = deps.moduleConfig.relayUrl;
  let relay: MailRelay | null = null;
  const relayOf = () => {
    if (!relayUrl) return null;
    relay ??= createMailRelay({ relayUrl, rejectUnauthorized: deps.moduleConfig.relayRejectUnauthorized });
    return relay;
  };

  /**
   * Queues an outbound message (`status: queued`) after checking that the
   * agent owns `from`, that `to` holds 1–50 valid addresses and that the
   * agent's send quota (setting `postbox_send_quota_per_day`, rolling 24 h,
   * shared by replicas through the rate limiter) is not exhausted. The raw
   * message is composed now and stored in the blob store (`mime_ref`); a
   * durable job delivers it (see {@link deliver}).
   * A send that fails after the quota check (the blob store or the database
   * failing) gives its quota unit back, unless the message may have been
   * stored all the same (a commit whose answer was lost).
   * @throws InputError (400) for malformed addresses; NotAllowedError (403) when the agent does not
   *   own `from`; PayloadTooLargeError (413) for bodies over `maxBodyBytes`; RateLimitError (429,
   *   `Retry-After`) over quota; nothing is created on any of these.
   */
  async function send(request: SendRequest): Promise<SendResponse> {
    const fromBoxes = parseMailboxes(request.from);
    if (fromBoxes?.length !== 1 || !fromBoxes[0] || namesAnotherAddress(fromBoxes[0]))
      throw fieldError('from', 'must be exactly one address');
    const recipients = parseMailboxes(request.to);
    if (!recipients || recipients.length === 0) throw fieldError('to', 'must be one or more valid addresses, comma-separated');
    if (recipients.some(namesAnotherAddress)) {
      throw fieldError(
        'to',
        'holds addresses separated by spaces ("a@x.test b@y.test" reads as one named address): separate them with commas',
      );
    }
    if (recipients.some((mailbox) => mailbox.address.startsWith('"'))) {
      throw fieldError('to', 'quoted local parts ("…"@domain) are not sent to (RFC 5321 §4.1.2 advises against them)');
    }
    if (recipients.length > MAX_RECIPIENTS) throw fieldError('to', `at most ${MAX_RECIPIENTS} recipients`);
    for (const [name, value] of [
      ['body', request.body],
      ['html', request.html ?? ''],
    ] as const) {
      if (Buffer.byteLength(value, 'utf8') > deps.moduleConfig.maxBodyBytes) {
        throw new PayloadTooLargeError(`${name} is over ${deps.moduleConfig.maxBodyBytes} bytes.`);
      }
    }
    const fromAddress = normalizeAddress(fromBoxes[0].address);
    const owned = await knex()('postbox_addresses').where({ address: fromAddress, agent_id: request.agent_id }).first();
    if (!owned)
      throw new NotAllowedError(`Agent "${request.agent_id}" does not own the address "${fromAddress}" (allocate it with /alloc).`);

    const quota = await deps.settings.get<number>('postbox_send_quota_per_day');
    const quotaKey = `postbox:send:${request.agent_id}`;
    if (quota === 0) throw new RateLimitError('Sending is turned off (postbox_send_quota_per_day is 0).', DAY_MS);
    const decision = await deps.rateLimiter.consume({ key: quotaKey, limit: quota, windowMs: DAY_MS });
    if (!decision.allowed) {
      throw new RateLimitError(`The send quota of ${quota} messages per 24 hours is used up.`, decision.retryAfterMs);
    }
    const attempt: StoreAttempt = { commitSent: false };
    try {
      return await store(attempt, request, recipients);
    } catch (error) {
      // A message that was not queued gives its unit back, so that an outage of the blob store
      // or the database does not use up the quota of an agent that retries.
      if (storedNothing(attempt, error)) {
        await deps.rateLimiter.refund({ key: quotaKey, windowMs: DAY_MS }).catch((refundError: unknown) => {
          deps.logger.warn({ err: refundError, agent_id: request.agent_id }, 'could not refund a send quota unit');
        });
      }
      throw error;
    }
  }

  /**
   * Composes the message, stores its raw form and queues it with its
   * delivery job (one transaction), marking `attempt.commitSent` once the
   * transaction's statements succeeded and its COMMIT goes out.
   */
  async function store(
    attempt: StoreAttempt,
    request: SendRequest,
    recipients: NonNullable<ReturnType<typeof parseMailboxes>>,
  ): Promise<SendResponse> {
    const id = newId('msg_');
    const now = deps.clock.now();
    const messageId = `<${id}@${deps.moduleConfig.mailDomain}>`;
    const raw = await composeMessage({
      from: request.from,
      to: request.to,
      subject: request.subject,
      text: request.body,
      html: request.html,
      messageId,
      date: new Date(now),
      inReplyTo: request.in_reply_to,
    });
    const mimeRef = `${MIME_PREFIX}${createHash('sha256').update(raw).digest('hex')}.eml`;
    await deps.blobStore.put({ key: mimeRef, body: raw, contentType: 'message/rfc822' });
    const headers: Record<string, string> = {
      'message-id': messageId,
      date: new Date(now).toUTCString(),
      from: request.from,
      to: request.to,
      subject: request.subject,
      ...(request.in_reply_to === undefined ? {} : { 'in-reply-to': request.in_reply_to }),
    };
    const row: Omit<MessageRow, 'seq'> = {
      id,
      agent_id: request.agent_id,
      direction: 'out',
      folder: SENT,
      to_address: recipients.map((mailbox) => normalizeAddress(mailbox.address)).join(', '),
      from_address: request.from,
      subject: request.subject,
      body: request.body,
      html: request.html ?? null,
      headers: JSON.stringify(headers),
      attachments: '[]',
      dedupe_key: null,
      mime_ref: mimeRef,
      mime_owned: true,
      injection_score: 0,
      quarantined: false,
      read_at: now,
      status: 'queued',
      error: null,
      created_at: now,
      updated_at: now,
      sent_at: null,
    };
    try {
      await knex().transaction(async (trx) => {
        await lockMessageOrder(deps.sql, trx, [row.agent_id]);
        await trx('postbox_messages').insert(row);
        await deps.jobs.enqueue({
          name: SEND_JOB,
          payload: { message_id: id },
          dedupeKey: `${SEND_JOB}:${id}`,
          maxAttempts: deps.moduleConfig.sendMaxAttempts,
          trx,
        });
        attempt.commitSent = true;
      });
    } catch (error) {
      if (storedNothing(attempt, error)) await deps.blobStore.delete({ keys: [mimeRef] }).catch(() => undefined);
      throw error;
    }
    return { id, status: 'queued' };
  }

  async function finish(row: MessageRow, status: 'sent' | 'failed', error: string | null): Promise<void> {
    const now = deps.clock.now();
    await knex().transaction(async (trx) => {
      const changed = await trx('postbox_messages')
        .where({ id: row.id, status: 'queued' })
        .update({ status, error, updated_at: now, sent_at: status === 'sent' ? now : null });
      if (changed === 0) return;
      const view = messageView({ ...row, status, error, updated_at: now, sent_at: status === 'sent' ? now : null }, false);
      await deps.webhooks.enqueue({
        trx,
        agentId: row.agent_id,
        messageId: row.id,
        type: status === 'sent' ? 'message.sent' : 'message.failed',
        data: eventData(view),
      });
    });
  }

  /** The raw message of `row`, or `null` when it is missing from the blob store. */
  async function rawOf(row: MessageRow): Promise<Buffer | null> {
    const raw = row.mime_ref ? await deps.blobStore.get({ key: row.mime_ref }) : null;
    return raw ? buffer(raw) : null;
  }

  /**
   * One delivery attempt of a queued outbound message. Each envelope
   * recipient of this postbox (an address an agent holds, or the
   * postmaster's when its agent exists) gets its copy stored directly, as
   * SMTP mail is (`storeLocal`: scored, rules, webhooks; a copy stored by an
   * earlier attempt is not stored again); the other recipients go to the
   * relay. Success → `sent` and `message.sent`, with no relay needed when
   * every recipient is local; a permanent refusal (5xx), a message the
   * parser refuses, or the last attempt → `failed` with the reason and
   * `message.failed`; any other failure throws so the job runner retries
   * with back-off. Without a relay, a message with recipients elsewhere
   * stays `queued` (its local recipients still get their copy).
   * When `signal` aborts (the job's timeout, shutdown, a lost lease) during
   * the hand-over to the relay, its SMTP connection is closed at once and the
   * attempt throws. The job's timeout counts as a relay failure (the last
   * attempt makes the message `failed`); after a shutdown or a lost lease
   * nothing is recorded, as the attempt that carries on records the outcome.
   * @throws the failure, so that the job runner retries; `signal`'s reason after a shutdown or a lost lease.
   */
  async function deliver(options: { payload: unknown; attempt: number; signal: AbortSignal }): Promise<void> {
    const { message_id: id } = sendJobPayloadSchema.parse(options.payload);
    const row = (await knex()('postbox_messages').where({ id, direction: 'out' }).first()) as MessageRow | undefined;
    if (row?.status !== 'queued') return;
    const recipients = envelopeRecipients(row);
    const isLocal = await Promise.all(recipients.map((recipient) => deps.delivered(normalizeAddress(recipient))));
    const local = recipients.filter((_, index) => isLocal[index]);
    const remote = recipients.filter((_, index) => !isLocal[index]);
    const transport = relayOf();
    if (local.length === 0 && !transport) return;
    const raw = await rawOf(row);
    if (!raw) {
      await finish(row, 'failed', 'The composed message is missing from the blob store.');
      return;
    }
    const from = parseMailboxes(row.from_address)?.[0]?.address ?? row.from_address;
    const lastAttempt = options.attempt >= deps.moduleConfig.sendMaxAttempts;
    if (local.length > 0) {
      try {
        await deps.storeLocal({ raw, recipients: local, envelopeFrom: from });
      } catch (error) {
        if (!(error instanceof MalformedMessageError) && !lastAttempt) throw error;
        deps.logger.warn({ err: error, message_id: row.id }, 'postbox: could not store a sent message for its local recipients');
        await finish(row, 'failed', `The message could not be stored for the recipients on this server (${local.join(', ')}).`);
        return;
      }
    }
    if (remote.length > 0) {
      if (!transport) return;
      try {
        await transport.send({ from, to: remote, raw, signal: options.signal });
      } catch (error) {
        const reason: unknown = options.signal.reason;
        if (reason instanceof JobInterruptedError || reason instanceof JobLeaseLostError) throw reason;
        const message = error instanceof RelayError ? error.message : `Relay failure: ${(error as Error).message}`;
        const permanent = error instanceof RelayError && error.permanent;
        if (permanent || lastAttempt) {
          await finish(row, 'failed', message);
          return;
        }
        throw new Error(message, { cause: error });
      }
    }
    await finish(row, 'sent', null);
  }

  return {
    send,
    deliver,
    /** `smtp://host:port` of the relay, `json`, or `null` when mail for other servers stays queued. */
    relayDescription: () => relayOf()?.description ?? null,
    close: () => {
      relay?.close();
      relay = null;
    },
  };
}
