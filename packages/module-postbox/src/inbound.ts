import { createGroupCommit, type ItemOutcome, NotFoundError, newId } from '@agentinfra/core';
import { bareAddress, normalizeAddress, senderAddress } from './addresses.js';
import { contentDigest, dedupeKeyOf } from './dedupe-key.js';
import { headerRecord } from './header-record.js';
import { LocalSenderError, type LocalSenders, OriginatorFormError } from './local-senders.js';
import { generatedMessageId, ingestedIdentity } from './message-id.js';
import { lockMessageOrder } from './message-order-lock.js';
import { eventData, type MessageRow, messageView } from './message-view.js';
import { MalformedMessageError, type MimeParserPool } from './mime-parser-pool.js';
import { type AttachmentInfo, type ParsedMessage, TRUNCATED_HEADER } from './parsed-message.js';
import type { PostmasterRoute } from './postmaster.js';
import { createRawKeyUsers } from './raw-key-users.js';
import type { RawMimeGuard } from './raw-mime-guard.js';
import { readRecipientContext } from './recipient-context.js';
import { applyRules, INBOX } from './rules.js';
import type { IngestResponse } from './schemas.js';
import { boundedScoringInput } from './scoring/bounded-input.js';
import { injectionHeaders, withoutInjectionHeaders } from './scoring/injection-headers.js';
import type { InjectionScorer, ScoringInput } from './scoring/injection-scorer.js';
import type { InjectionExplanation, LocalInjectionScorer } from './scoring/local-scorer.js';
import type { PostboxDeps } from './service-deps.js';
import { deliveriesOf, type WebhookEventToEnqueue, type Webhooks } from './webhooks.js';

/** Prefix of the blob keys of raw MIME the postbox stored itself (retention deletes only these). */
export const MIME_PREFIX = 'postbox/mime/';

/** One inbound message, from /ingest (its request body) or from the SMTP listener. */
export interface InboundMessage {
  /** Recipient address (bare or with display name). */
  to: string;
  from: string;
  subject: string;
  body: string;
  html?: string | null | undefined;
  /** Header name → value; names are compared case-insensitively. */
  headers: Record<string, string>;
  /** Blob key of the raw MIME (the postbox's own for SMTP mail, the external MTA's for /ingest). */
  mime_ref?: string | null | undefined;
  attachments?: readonly AttachmentInfo[] | undefined;
}

/** Raw MIME to store for some recipients: from the bundled MTA (with its envelope) or from /send. */
export interface RawDelivery {
  raw: Buffer;
  /** Envelope recipients (any case; `postmaster` without a domain allowed). */
  recipients: readonly string[];
  /** The envelope sender (`MAIL FROM`), `''` for the null reverse-path, `null` when unknown. */
  envelopeFrom: string | null;
}

/** The /ingest answer. */
export type IngestResult = IngestResponse;

/**
 * Largest message (subject, text and HTML characters) the local injection
 * model explains on the event loop: ~0.5 ms for a 20 KB message, about what
 * one read of the scorer covers; larger ones, which it reads again in
 * windows (~6 ms at 64 KB), go to the worker pool, where a megabyte of text
 * cannot stall other requests (bench/worst-case.ts, issue #11).
 */
const INLINE_SCORING_MAX_CHARS = 24_000;

/** Messages stored per transaction at most (bounded by the bind-parameter limits of SQLite and PostgreSQL). */
const MAX_BATCH = 64;
/**
 * Ingest transactions in flight at once; messages arriving meanwhile gather into the next one (one
 * measured lowest CPU per message on SQLite and PostgreSQL: bigger batches, fewer round trips).
 */
const MAX_BATCHES_IN_FLIGHT = 1;
/**
 * Characters of body and HTML from which a message is stored in a
 * transaction of its own, never batched with others: on SQLite an insert runs
 * synchronously, 10–40 ms per 6 MB row on an idle core (the upper end when
 * the WAL checkpoint runs in that commit), so a batch of several large
 * messages held the event loop for hundreds of milliseconds
 * (bench/worst-case.ts, issue #11).
 */
export const LARGE_MESSAGE_CHARS = 262_144;

/** A message ready to store: normalised, scored, keyed for idempotency. */
interface ScoredMessage {
  message: InboundMessage;
  /** Bare recipient address. */
  recipient: string;
  /** Lower-case header names, with the postbox's `x-agentinfra-injection*` headers. */
  headers: Record<string, string>;
  dedupeKey: string;
  mimeOwned: boolean;
  injectionScore: number;
}

/** A message's injection score and the headers that explain it. */
interface ScoredInput {
  score: number;
  headers: Record<string, string>;
}

/** The answer for one stored message, and whether it was a duplicate (the answer is then the first copy's). */
interface StoredMessage {
  result: IngestResult;
  duplicate: boolean;
}

/** The ingest path shared by /ingest and the bundled MTA: store, score, apply rules, notify. */
export function createInbound(
  deps: PostboxDeps & {
    scorer: InjectionScorer;
    fallbackScorer: LocalInjectionScorer;
    webhooks: Webhooks;
    mimeParser: MimeParserPool;
    postmaster: PostmasterRoute;
    /** Refuses SMTP mail whose envelope or `From`/`Sender` names an address of this postbox. */
    localSenders: LocalSenders;
    /** Whether mail for a bare, lower-case address is delivered to some agent. */
    delivered: (address: string) => Promise<boolean>;
    /** Orders deletions of raw MIME and deliveries of the same bytes across replicas. */
    rawGuard: RawMimeGuard;
  },
) {
  const knex = () => deps.sql.knex;
  const stored = deps.metrics.counter<'outcome'>({
    name: 'agentinfra_postbox_inbound_messages_total',
    help: 'Inbound messages stored (SMTP and /ingest), by outcome: delivered to a folder, or quarantined.',
    labelNames: ['outcome'],
  });

  /** The local model's explanation of `input`: in the worker pool when it is large, on the event loop otherwise. */
  function explainLocally(input: ScoringInput): InjectionExplanation | Promise<InjectionExplanation> {
    const size = input.subject.length + input.text.length + (input.html?.length ?? 0);
    return size > INLINE_SCORING_MAX_CHARS ? deps.mimeParser.explain(input) : deps.fallbackScorer.explain(input);
  }

  /**
   * Scores a message with the configured scorer (the local one when a remote
   * scorer fails) and explains it with the local model: the score and the
   * `x-agentinfra-injection*` headers (see `scoring/injection-headers.ts`).
   * `explained`: the local model's explanation when already computed (the
   * MIME worker scores SMTP mail off the event loop).
   */
  async function scoreWithReasons(message: ScoringInput, explained?: InjectionExplanation): Promise<ScoredInput> {
    const input = boundedScoringInput(message);
    const local = explained ?? (await explainLocally(input));
    const localScorerId = deps.fallbackScorer.id;
    if (deps.scorer === deps.fallbackScorer) {
      return { score: local.score, headers: injectionHeaders({ scorerId: localScorerId, score: local.score, local, localScorerId }) };
    }
    try {
      const score = await deps.scorer.score(input);
      return { score, headers: injectionHeaders({ scorerId: deps.scorer.id, score, local, localScorerId }) };
    } catch (error) {
      deps.logger.warn({ err: error, scorer: deps.scorer.id }, 'injection scorer failed; used the local scorer');
      const headers = injectionHeaders({ scorerId: localScorerId, score: local.score, local, localScorerId, fallbackFrom: deps.scorer.id });
      return { score: local.score, headers };
    }
  }

  async function score(input: ScoringInput): Promise<number> {
    return (await scoreWithReasons(input)).score;
  }

  async function existing(dedupeKey: string): Promise<StoredMessage | null> {
    const row = (await knex()('postbox_messages')
      .where({ dedupe_key: dedupeKey })
      .select('id', 'agent_id', 'injection_score', 'quarantined')
      .first()) as Pick<MessageRow, 'id' | 'agent_id' | 'injection_score' | 'quarantined'> | undefined;
    if (!row) return null;
    const result = {
      id: row.id,
      agent_id: row.agent_id,
      injection_score: Number(row.injection_score),
      quarantined: Boolean(row.quarantined),
    };
    return { result, duplicate: true };
  }

  /**
   * Stores a batch of scored messages with one multi-row insert (see
   * {@link createGroupCommit}), in a transaction with their webhook
   * deliveries when there are any. The recipients' owners with their rules
   * and webhooks (one statement) and the quarantine threshold are read once
   * per batch, when the batch starts, so a rule, webhook or setting changed
   * before a message was submitted always applies to it. A recipient nobody
   * owns (the postmaster too, when its configured agent does not exist) fails
   * only its own item (NotFoundError); a duplicate (see
   * {@link dedupeKeyOf}) fails the batch, whose items are then stored one by
   * one, where the duplicate returns the first message's answer.
   */
  async function storeBatch(items: readonly ScoredMessage[]): Promise<ItemOutcome<StoredMessage>[]> {
    const recipients = [...new Set(items.map((item) => item.recipient))];
    const postmasterAgents = [...new Set(recipients.flatMap((recipient) => deps.postmaster.agentFor(recipient) ?? []))];
    const [context, threshold, absentAgents] = await Promise.all([
      readRecipientContext(knex(), recipients, postmasterAgents),
      deps.settings.get<number>('postbox_quarantine_threshold'),
      postmasterAgents.length === 0 ? ([] as string[]) : deps.agents.missing({ agentIds: postmasterAgents }),
    ]);
    /** The agent receiving postmaster mail for `recipient`, unless it does not exist: then no one receives it. */
    const postmasterOf = (recipient: string) => {
      const agentId = deps.postmaster.agentFor(recipient);
      return agentId === undefined || absentAgents.includes(agentId) ? undefined : agentId;
    };
    const now = deps.clock.now();
    const outcomes: ItemOutcome<StoredMessage>[] = [];
    const rows: Array<Omit<MessageRow, 'seq'>> = [];
    const events: WebhookEventToEnqueue[] = [];
    for (const item of items) {
      const agentId = context.owners.get(item.recipient) ?? postmasterOf(item.recipient);
      if (agentId === undefined) {
        outcomes.push({ ok: false, error: new NotFoundError(`No agent has the address "${item.recipient}".`) });
        continue;
      }
      const outcome = applyRules(context.rules.get(agentId) ?? [], {
        from: senderAddress(item.message.from),
        to: item.recipient,
        subject: item.message.subject,
      });
      const quarantined = item.injectionScore >= threshold || outcome.quarantine;
      const row: Omit<MessageRow, 'seq'> = {
        id: newId('msg_'),
        agent_id: agentId,
        direction: 'in',
        folder: outcome.folder ?? INBOX,
        to_address: item.recipient,
        from_address: item.message.from,
        subject: item.message.subject,
        body: item.message.body,
        html: item.message.html ?? null,
        headers: JSON.stringify(item.headers),
        attachments: JSON.stringify(item.message.attachments ?? []),
        dedupe_key: item.dedupeKey,
        mime_ref: item.message.mime_ref ?? null,
        mime_owned: item.mimeOwned,
        injection_score: item.injectionScore,
        quarantined,
        read_at: outcome.markRead ? now : null,
        status: 'received',
        error: null,
        created_at: now,
        updated_at: now,
        sent_at: null,
      };
      rows.push(row);
      if (context.webhooks.has(agentId)) {
        events.push({
          agentId,
          messageId: row.id,
          type: quarantined ? 'message.quarantined' : 'message.received',
          data: eventData(messageView({ ...row, seq: 0 }, false)),
          force: outcome.forceWebhooks,
        });
      }
      const result = { id: row.id, agent_id: agentId, injection_score: item.injectionScore, quarantined };
      outcomes.push({ ok: true, value: { result, duplicate: false } });
    }
    if (rows.length === 0) return outcomes;
    const deliveries = deliveriesOf(events, [...context.webhooks.values()].flat());
    try {
      await knex().transaction(async (trx) => {
        await lockMessageOrder(
          deps.sql,
          trx,
          rows.map((row) => row.agent_id),
        );
        await trx('postbox_messages').insert(rows);
        if (deliveries.length > 0) await deps.webhooks.enqueueDeliveries(trx, deliveries);
      });
    } catch (error) {
      const only = items.length === 1 ? items[0] : undefined;
      if (only && deps.sql.isUniqueViolation(error)) {
        const first = await existing(only.dedupeKey);
        if (first) return [{ ok: true, value: first }];
      }
      throw error;
    }
    for (const row of rows) stored.inc({ outcome: row.quarantined ? 'quarantined' : 'delivered' });
    return outcomes;
  }

  const batcher = createGroupCommit(storeBatch, { maxBatch: MAX_BATCH, maxInFlight: MAX_BATCHES_IN_FLIGHT });
  const largeBatcher = createGroupCommit(storeBatch, { maxBatch: 1, maxInFlight: MAX_BATCHES_IN_FLIGHT });

  /** Normalises and scores one message, then hands it to the group commit (a large one to a batch of its own). */
  async function submit(
    message: InboundMessage,
    options: {
      mimeOwned?: boolean | undefined;
      /** SHA-256 (hex) of the raw message (SMTP path), from which a missing Message-ID is made; else {@link ingestedIdentity}. */
      rawIdentity?: string | undefined;
      scored?: ScoredInput | undefined;
      /** Bodies the MIME parser cut to `maxBodyBytes` (SMTP path). */
      truncated?: ParsedMessage['truncated'] | undefined;
      /** The message's {@link contentDigest}, when already computed (once for all recipients of SMTP mail). */
      contentDigest?: string | undefined;
    },
  ): Promise<StoredMessage> {
    const recipient = deps.postmaster.canonical(bareAddress(message.to));
    // Names are lower-cased; of names that differ only in case, the later one in `message.headers` wins.
    const headers = headerRecord(Object.entries(message.headers).map(([name, value]) => [name.toLowerCase(), value]));
    // Only the postbox says what it cut: a sender's copy of the header is dropped.
    delete headers[TRUNCATED_HEADER];
    if (options.truncated && options.truncated.length > 0) headers[TRUNCATED_HEADER] = options.truncated.join(',');
    let messageId = headers['message-id']?.trim() ?? '';
    if (messageId === '') {
      // RFC 5322 §3.6.4: a message SHOULD have one; as an MTA would, the postbox adds it (the same on both paths).
      messageId = generatedMessageId(options.rawIdentity ?? ingestedIdentity({ ...message, headers }), deps.moduleConfig.mailDomain);
      headers['message-id'] = messageId;
    }
    if (options.scored === undefined && deps.scorer !== deps.fallbackScorer) {
      // A remote scorer is not sent mail that no agent would receive.
      if (!(await deps.delivered(recipient))) throw new NotFoundError(`No agent has the address "${recipient}".`);
    }
    const scored = options.scored ?? (await scoreWithReasons({ subject: message.subject, text: message.body, html: message.html ?? null }));
    const large = message.body.length + (message.html?.length ?? 0) >= LARGE_MESSAGE_CHARS;
    return (large ? largeBatcher : batcher).submit({
      message,
      recipient,
      headers: { ...withoutInjectionHeaders(headers), ...scored.headers },
      dedupeKey: dedupeKeyOf(recipient, messageId, options.contentDigest ?? contentDigest(message)),
      mimeOwned: options.mimeOwned ?? false,
      injectionScore: scored.score,
    });
  }

  /**
   * Stores one inbound message for the agent owning `to`: scores it,
   * quarantines it when the score reaches the `postbox_quarantine_threshold`
   * setting (or a rule says so), runs the agent's rules in name order, and
   * enqueues `message.received` or `message.quarantined` webhook deliveries
   * in the same transaction. Messages arriving together share one transaction
   * (group commit), except those of {@link LARGE_MESSAGE_CHARS} or more, each
   * stored alone; the promise settles after the message's transaction
   * committed. A message already stored for this recipient (the same
   * Message-ID and content, see {@link dedupeKeyOf}) is not stored again: the
   * first one's answer is returned. A message without a Message-ID gets one
   * made from the message (see {@link generatedMessageId}), stored among its
   * headers.
   * @throws NotFoundError (404) when no agent has the address `to`.
   */
  function ingest(message: InboundMessage, options: { mimeOwned?: boolean } = {}): Promise<IngestResult> {
    return submit(message, options).then((stored) => stored.result);
  }

  /** SMTP deliveries in progress per raw blob key, so that one never removes a blob another is storing. */
  const rawUsers = createRawKeyUsers();

  /**
   * Removes the raw blob of a message that was stored for no recipient (the
   * parser refused it, or each copy was a duplicate), unless a stored message
   * refers to it (the same bytes accepted earlier: a parse can also fail for
   * want of memory, so "the same bytes fail the same way" is not relied on)
   * or another delivery in this process is storing the same bytes. A failure
   * to remove is logged; the SMTP answer stands.
   */
  async function dropUnreferencedRaw(mimeRef: string): Promise<void> {
    try {
      await deps.rawGuard.deleteUnreferenced([mimeRef], () => rawUsers.sharedWithOthers(mimeRef));
    } catch (failure) {
      deps.logger.warn({ err: failure, mime_ref: mimeRef }, 'smtp: could not remove an unreferenced raw message from the blob store');
    }
  }

  /**
   * The SMTP path: stores the raw message once in the blob store (key
   * `postbox/mime/<sha256>.eml`, hashed in the worker pool, so a re-delivery writes the same object;
   * the write and its fsync run while mailparser reads the message in a worker
   * thread), parses and scores it once, and ingests it for each recipient once the write
   * succeeded. A recipient whose address disappeared since RCPT TO is
   * skipped.
   * When no recipient got a new message (each copy was a duplicate, or each
   * address disappeared), the raw blob is removed again unless a stored
   * message refers to the same bytes, so retransmissions cannot fill the
   * blob store.
   * @returns the ids of the stored (or already stored) messages, once all are committed.
   * @throws the blob store's error when the raw message could not be stored (nothing is then stored);
   *   MalformedMessageError when mailparser refuses the message (nothing is then stored: the raw
   *   blob is removed again unless a stored message refers to it, so mail that is refused with 554
   *   cannot fill the blob store); an OriginatorFormError when the header has a CR not followed by LF,
   *   more than one `From` or `Sender` field or one of too many mailboxes, and LocalSenderError
   *   when the envelope sender or an address of a `From` or `Sender` field is one of this postbox's
   *   (`local-senders.ts`; nothing is then stored for any of them, the raw blob removed as for
   *   MalformedMessageError).
   */
  function ingestRaw(options: RawDelivery): Promise<string[]> {
    return storeRaw(options, { checkSender: true });
  }

  /**
   * The /send path for recipients of this postbox: stores a message an agent
   * sent (its composed raw MIME, `options.raw`) for each of
   * `options.recipients` exactly as {@link ingestRaw} stores SMTP mail
   * (parsed, scored, rules applied, webhooks enqueued; a copy already stored
   * for a recipient, as when the delivery job runs again, is not stored
   * twice), but without the local-sender check: the message never crossed
   * SMTP, and its sender is the agent whose address it is.
   * @returns the ids of the stored (or already stored) copies.
   * @throws the blob store's error; MalformedMessageError when mailparser refuses the message.
   */
  function ingestSent(options: RawDelivery): Promise<string[]> {
    return storeRaw(options, { checkSender: false });
  }

  /** {@link ingestRaw} and {@link ingestSent}: `checkSender` runs {@link LocalSenders.check}. */
  async function storeRaw(options: RawDelivery, mode: { checkSender: boolean }): Promise<string[]> {
    const hash = await deps.mimeParser.digest(options.raw);
    const mimeRef = `${MIME_PREFIX}${hash}.eml`;
    const leave = rawUsers.enter(mimeRef);
    try {
      return await deliverRaw(options, hash, mimeRef, mode);
    } finally {
      leave();
    }
  }

  /** {@link storeRaw} once the raw message's hash is known and its blob key is marked as in use. */
  async function deliverRaw(options: RawDelivery, hash: string, mimeRef: string, mode: { checkSender: boolean }): Promise<string[]> {
    const stored = deps.blobStore.put({ key: mimeRef, body: options.raw, contentType: 'message/rfc822' });
    // Awaited once the message is parsed and scored: marked as handled now, as a rejection
    // nobody handles yet (the write failing while mailparser runs) would end the process.
    stored.catch(() => undefined);
    let parsed: ParsedMessage;
    let explained: InjectionExplanation;
    try {
      ({ message: parsed, local: explained } = await deps.mimeParser.parse(options.raw));
      if (mode.checkSender) {
        await deps.localSenders.check({ envelopeFrom: options.envelopeFrom, ...parsed.originators });
      }
    } catch (error) {
      await stored.catch(() => undefined);
      if (error instanceof MalformedMessageError || error instanceof LocalSenderError || error instanceof OriginatorFormError) {
        await dropUnreferencedRaw(mimeRef);
      }
      throw error;
    }
    const scored = await scoreWithReasons({ subject: parsed.subject, text: parsed.text, html: parsed.html }, explained);
    await stored;
    const message: Omit<InboundMessage, 'to'> = {
      from: parsed.from || options.envelopeFrom || '',
      subject: parsed.subject,
      body: parsed.text,
      html: parsed.html,
      headers: parsed.headers,
      mime_ref: mimeRef,
      attachments: parsed.attachments,
    };
    const digest = contentDigest({ ...message, attachmentChecksums: parsed.attachmentChecksums });
    const results = await Promise.allSettled(
      options.recipients.map((recipient) =>
        submit(
          { ...message, to: normalizeAddress(recipient) },
          { mimeOwned: true, rawIdentity: hash, scored, truncated: parsed.truncated, contentDigest: digest },
        ),
      ),
    );
    const ids: string[] = [];
    let storedNew = false;
    for (const [index, result] of results.entries()) {
      if (result.status === 'fulfilled') {
        ids.push(result.value.result.id);
        storedNew ||= !result.value.duplicate;
        continue;
      }
      if (!(result.reason instanceof NotFoundError)) throw result.reason;
      deps.logger.info({ recipient: options.recipients[index] }, 'postbox: recipient address was removed before delivery; skipped');
    }
    // No new row refers to the blob just written: keep it only if an earlier copy (the same bytes) does.
    if (!storedNew) await dropUnreferencedRaw(mimeRef);
    // Another replica may have deleted the same bytes between the write and the commit (a deleted copy's removal).
    else await deps.rawGuard.ensure(mimeRef, options.raw);
    return ids;
  }

  return {
    ingest,
    ingestRaw,
    ingestSent,
    score,
    /** Whether a delivery of this process is storing raw MIME under `key` now (its messages may not be committed yet). */
    storingRaw: (key: string) => rawUsers.inUse(key),
  };
}
