import {
  assertWithinQuota,
  ConflictError,
  createListCursor,
  InputError,
  isoTimestamp,
  NotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
} from '@agentinfra/core';
import { z } from 'zod';
import { createAcceptedRecipients } from './accepted-recipients.js';
import { localPartProblem, normalizeAddress } from './addresses.js';
import { createPostboxAdmin } from './admin-queries.js';
import { createInbound } from './inbound.js';
import { createLocalSenders } from './local-senders.js';
import { MAX_SEQ, type MessageRow, messageView } from './message-view.js';
import { createMimeParserPool } from './mime-parser-pool.js';
import { createMimeRemovals } from './mime-removals.js';
import { createOutbound } from './outbound.js';
import { createPostmasterRoute } from './postmaster.js';
import { createRawMimeGuard } from './raw-mime-guard.js';
import type { RuleAction, RuleMatch } from './rules.js';
import type {
  AddressesResponse,
  AgentRequest,
  AllocRequest,
  AllocResponse,
  DeleteRuleRequest,
  DeleteRuleResponse,
  IngestRequest,
  IngestResponse,
  ListRequest,
  ListResponse,
  ListRulesResponse,
  MarkReadRequest,
  MarkReadResponse,
  PutRuleRequest,
  PutRuleResponse,
  RawMessageRequest,
  RawMessageResponse,
} from './schemas.js';
import { deferredLocalScorer } from './scoring/deferred-local-scorer.js';
import { createHttpInjectionScorer } from './scoring/http-scorer.js';
import type { InjectionScorer } from './scoring/injection-scorer.js';
import type { PostboxDeps } from './service-deps.js';
import { createRefusedRecipients } from './smtp/refused-recipients.js';
import { type SmtpListener, startSmtpListener } from './smtp/smtp-listener.js';
import { createSmtpMetrics } from './smtp/smtp-metrics.js';
import { createWebhooks } from './webhooks.js';

/** Rules one agent may keep. */
export const MAX_RULES_PER_AGENT = 100;
/** Worker threads parsing SMTP mail (one: the event loop keeps the other core of a small host). */
const MIME_PARSER_THREADS = 1;
/** SMTP messages waiting for the parser at most; more get 451 and are retried by the sender. */
const MIME_PARSER_QUEUE = 64;
/** Rows deleted per statement by the retention job. */
const RETENTION_BATCH = 500;

/** /list positions: the `seq` of the last message returned, passed back as `since`. */
const listCursor = createListCursor({ schema: z.strictObject({ s: z.int().min(0).max(MAX_SEQ) }), field: 'since' });
const DAY_MS = 86_400_000;
/** How long RCPT TO reuses "this address exists" (see `accepted-recipients.ts`). */
const RECIPIENT_MEMORY_MS = 1_000;
/** Lifetime of a /raw download URL, in seconds. */
const RAW_URL_SECONDS = 300;
/** Listen errors after which the postbox serves without its MTA (README: a listener that cannot bind is skipped). */
const UNBINDABLE = new Set(['EADDRINUSE', 'EACCES']);

/** Options of {@link createPostboxService} beyond the ports (tests, embedding apps). */
export interface PostboxServiceOptions {
  /** Replaces the scorer chosen by config (`postbox.scorer`). */
  scorer?: InjectionScorer;
}

/**
 * agent-postbox without HTTP: addresses, the inbound path shared by the
 * bundled MTA and /ingest (store, score, quarantine, rules, webhooks),
 * mailbox listing, rules, outbound mail under a quota, signed webhooks, the
 * retention sweep, and the SMTP listener's life cycle. Route methods take
 * the parsed request bodies (`z.output` of the schemas in `schemas.ts`: the
 * kernel parses each body once; a library caller with untyped data runs
 * core's `parseRequest` first) and return the response shapes.
 */
export function createPostboxService(deps: PostboxDeps, options: PostboxServiceOptions = {}) {
  const knex = () => deps.sql.knex;
  const config = deps.moduleConfig;
  const reserved = new Set(config.reservedLocalParts.map((part) => part.toLowerCase()));
  const fallbackScorer = deferredLocalScorer();
  const scorer: InjectionScorer =
    options.scorer ??
    (config.scorer.kind === 'http'
      ? createHttpInjectionScorer({ url: config.scorer.url, token: config.scorer.token, timeoutMs: config.scorer.timeoutMs })
      : fallbackScorer);
  const webhooks = createWebhooks(deps);
  const mimeParser = createMimeParserPool({
    threads: MIME_PARSER_THREADS,
    maxQueue: MIME_PARSER_QUEUE,
    maxBodyBytes: config.maxBodyBytes,
    onError: (error) => deps.logger.error({ err: error }, 'postbox: a MIME parser thread failed; the messages it held were refused'),
  });
  const postmaster = createPostmasterRoute({ mailDomain: config.mailDomain, agentId: config.postmasterAgent });
  /** Whether `agentId` is a registered agent (agents may be created and deleted while the server runs). */
  const agentExists = async (agentId: string) => (await deps.agents.missing({ agentIds: [agentId] })).length === 0;
  /**
   * Whether mail for `address` (bare, lower-case) is delivered: an agent holds it, or it is the postmaster's and
   * the configured `postmasterAgent` exists (mail for an agent that does not exist would be stored for nobody).
   */
  const delivered = async (address: string) => {
    const recipient = postmaster.canonical(address);
    const postmasterAgent = postmaster.agentFor(recipient);
    if (postmasterAgent !== undefined && (await agentExists(postmasterAgent))) return true;
    return (await knex()('postbox_addresses').where({ address: recipient }).first('address')) !== undefined;
  };
  const localSenders = createLocalSenders({ knex, mailDomain: config.mailDomain, postmaster });
  const rawGuard = createRawMimeGuard({ sql: deps.sql, blobStore: deps.blobStore });
  const inbound = createInbound({ ...deps, scorer, fallbackScorer, webhooks, mimeParser, postmaster, localSenders, delivered, rawGuard });
  const outbound = createOutbound({ ...deps, webhooks, delivered, storeLocal: inbound.ingestSent });
  const mimeRemovals = createMimeRemovals({ knex, logger: deps.logger, rawGuard, storing: inbound.storingRaw });
  let listener: SmtpListener | null = null;
  const acceptedRecipients = createAcceptedRecipients(delivered, { ttlMs: RECIPIENT_MEMORY_MS, maxEntries: 10_000, now: () => Date.now() });

  /** Starts the bundled MTA on `port` (0: any free port). @throws the listen error (with its `code`) when the port cannot be bound. */
  const startMta = (port: number) =>
    startSmtpListener({
      port,
      host: config.smtp.host,
      hostname: config.smtp.hostname ?? config.mailDomain,
      maxMessageBytes: config.smtp.maxMessageBytes,
      maxClients: config.smtp.maxClients,
      socketTimeoutMs: config.smtp.socketTimeoutMs,
      stressSocketTimeoutMs: config.smtp.stressSocketTimeoutMs,
      dataTimeoutMs: config.smtp.dataTimeoutMs,
      tlsCertFile: config.smtp.tlsCertFile,
      tlsKeyFile: config.smtp.tlsKeyFile,
      logger: deps.logger,
      metrics: createSmtpMetrics(deps.metrics),
      refusedRecipients: createRefusedRecipients({
        rateLimiter: deps.rateLimiter,
        limit: config.smtp.maxRefusedRecipients,
        windowMs: config.smtp.refusedRecipientsWindowMs,
        logger: deps.logger,
      }),
      handlers: {
        acceptsRecipient: (address) => acceptedRecipients.accepts(normalizeAddress(address)),
        localSender: (address) => localSenders.firstLocal([address]),
        deliver: (message) => inbound.ingestRaw(message),
      },
    });

  const checkBodySize = (name: string, value: string | null | undefined) => {
    if (value && Buffer.byteLength(value, 'utf8') > config.maxBodyBytes) {
      throw new PayloadTooLargeError(`${name} is over ${config.maxBodyBytes} bytes.`);
    }
  };

  return {
    /** The scorer in use (`local-v1`, `http:<origin>`, …); reading it loads the local model when that is the scorer. */
    get scorerId() {
      return scorer.id;
    },
    /** Scores a message without storing it. */
    score: inbound.score,

    /**
     * Allocates `<local_part>@<mailDomain>` to an agent (lower-cased: mailboxes
     * are case-insensitive here).
     * @throws InputError (400, field `local_part`) for a local part that is not an RFC 5321
     *   Dot-string of at most 64 octets; NotAllowedError (403) for a reserved role address
     *   (`postbox.reservedLocalParts`: postmaster, abuse, admin …); ConflictError (409) when the address is taken or
     *   the agent holds its quota of addresses (setting `postbox_max_addresses_per_agent`).
     */
    async alloc(request: AllocRequest): Promise<AllocResponse> {
      const problem = localPartProblem(request.local_part);
      if (problem) throw new InputError('Invalid local_part.', { fields: [{ path: 'local_part', message: problem }] });
      if (reserved.has(request.local_part.toLowerCase())) {
        throw new NotAllowedError(
          `"${request.local_part.toLowerCase()}" is a reserved role address (postbox.reservedLocalParts): the operator's, not an agent's.`,
        );
      }
      const address = normalizeAddress(`${request.local_part}@${config.mailDomain}`);
      const quota = await deps.settings.get<number>('postbox_max_addresses_per_agent');
      try {
        await knex().transaction(async (trx) => {
          await deps.sql.lockInTransaction(trx, `postbox:addresses:${request.agent_id}`);
          const held = await trx('postbox_addresses').where({ agent_id: request.agent_id }).count({ n: '*' }).first();
          assertWithinQuota({
            agentId: request.agent_id,
            used: Number(held?.n ?? 0),
            quota,
            what: 'addresses',
            setting: 'postbox_max_addresses_per_agent',
            release: 'an operator can raise it',
          });
          await trx('postbox_addresses').insert({ address, agent_id: request.agent_id, created_at: deps.clock.now() });
        });
      } catch (error) {
        if (deps.sql.isUniqueViolation(error)) throw new ConflictError(`The address "${address}" is taken.`);
        throw error;
      }
      return { address };
    },

    /** The addresses of an agent, in code-point order. */
    async addresses(request: AgentRequest): Promise<AddressesResponse> {
      const rows = (await knex()('postbox_addresses').where({ agent_id: request.agent_id }).select('address')) as Array<{
        address: string;
      }>;
      return { addresses: rows.map((row) => row.address).sort() };
    },

    /** Whether the bundled MTA accepts mail for `address` (RCPT TO). */
    async acceptsRecipient(address: string): Promise<boolean> {
      return delivered(normalizeAddress(address));
    },

    /**
     * /ingest: the inbound path for an external MTA (see `createInbound`).
     * @throws PayloadTooLargeError (413) for a body over `maxBodyBytes`; NotFoundError (404) for an unknown recipient.
     */
    async ingest(message: IngestRequest): Promise<IngestResponse> {
      checkBodySize('body', message.body);
      checkBodySize('html', message.html);
      return inbound.ingest(message);
    },

    /** The bundled MTA's path: raw MIME for the envelope recipients. @returns the message ids. */
    ingestRaw: inbound.ingestRaw,

    /**
     * One page of an agent's mail in a stable order (the order it was stored),
     * after the `since` cursor. `next_cursor` always points after the last
     * message returned (or is `since` again when there was none), so passing
     * it back polls for new mail; `has_more` says whether more is already there.
     * @throws InputError (400) for a cursor /list did not make.
     */
    async list(request: ListRequest): Promise<ListResponse> {
      const after = request.since === null ? 0 : listCursor.decode(request.since).s;
      const query = knex()('postbox_messages').where({ agent_id: request.agent_id, direction: request.direction }).where('seq', '>', after);
      if (request.folder !== undefined) query.where({ folder: request.folder });
      if (request.unread_only) query.whereNull('read_at');
      const rows = (await query.orderBy('seq').limit(request.limit + 1)) as MessageRow[];
      const page = rows.slice(0, request.limit);
      const last = page[page.length - 1];
      return {
        messages: page.map((row) => messageView(row, request.reveal_quarantined ?? false)),
        next_cursor: last ? listCursor.encode({ s: Number(last.seq) }) : request.since,
        has_more: rows.length > request.limit,
      };
    },

    /** Marks the agent's messages among `ids` read. @returns how many were unread before. */
    async markRead(request: MarkReadRequest): Promise<MarkReadResponse> {
      const now = deps.clock.now();
      const updated = await knex()('postbox_messages')
        .where({ agent_id: request.agent_id })
        .whereIn('id', [...new Set(request.ids)])
        .whereNull('read_at')
        .update({ read_at: now, updated_at: now });
      return { updated };
    },

    /**
     * Creates or replaces the agent's rule `name` (rules run on ingest in name order).
     * @throws ConflictError (409) when the agent already has 100 other rules.
     */
    async putRule(request: PutRuleRequest): Promise<PutRuleResponse> {
      const now = deps.clock.now();
      await knex().transaction(async (trx) => {
        const count = Number(
          (
            (await trx('postbox_rules')
              .where({ agent_id: request.agent_id })
              .whereNot({ name: request.name })
              .count({ n: '*' })
              .first()) as { n: number | string }
          ).n,
        );
        if (count >= MAX_RULES_PER_AGENT) throw new ConflictError(`An agent can keep at most ${MAX_RULES_PER_AGENT} rules.`);
        await trx('postbox_rules')
          .insert({
            agent_id: request.agent_id,
            name: request.name,
            match: JSON.stringify(request.match),
            actions: JSON.stringify(request.actions),
            created_at: now,
            updated_at: now,
          })
          .onConflict(['agent_id', 'name'])
          .merge(['match', 'actions', 'updated_at']);
      });
      return { agent_id: request.agent_id, name: request.name, match: request.match, actions: request.actions };
    },

    /** The agent's rules in the order they run. */
    async listRules(request: AgentRequest): Promise<ListRulesResponse> {
      const rows = (await knex()('postbox_rules')
        .where({ agent_id: request.agent_id })
        .select('name', 'match', 'actions', 'updated_at')) as Array<{
        name: string;
        match: string;
        actions: string;
        updated_at: number | string;
      }>;
      rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return {
        rules: rows.map((row) => ({
          name: row.name,
          match: JSON.parse(row.match) as RuleMatch,
          actions: JSON.parse(row.actions) as RuleAction[],
          updated_at: isoTimestamp(Number(row.updated_at)),
        })),
      };
    },

    /** Deletes a rule. @throws NotFoundError (404) when the agent has no rule of that name. */
    async deleteRule(request: DeleteRuleRequest): Promise<DeleteRuleResponse> {
      const deleted = await knex()('postbox_rules').where({ agent_id: request.agent_id, name: request.name }).delete();
      if (deleted === 0) throw new NotFoundError(`Agent "${request.agent_id}" has no rule "${request.name}".`);
      return { name: request.name, deleted: true };
    },

    /** /send (see `createOutbound`). */
    send: outbound.send,
    /** The outbound delivery job. */
    deliverOutbound: outbound.deliver,
    /** `smtp://host:port`, `json`, or `null` when mail for other servers stays queued. */
    relayDescription: outbound.relayDescription,

    webhooks,

    /** Mail across agents and the quarantine queue for operators (the `/admin/*` routes). */
    admin: createPostboxAdmin(deps, webhooks, mimeRemovals),

    /**
     * A short-lived (5 minutes) download URL of a message's raw MIME (when the postbox stored it).
     * @throws NotFoundError (404) when the agent has no such message or its raw MIME is not in the blob store.
     */
    async rawMessage(request: RawMessageRequest): Promise<RawMessageResponse> {
      const row = (await knex()('postbox_messages')
        .where({ agent_id: request.agent_id, id: request.id })
        .select('mime_ref', 'mime_owned')
        .first()) as Pick<MessageRow, 'mime_ref' | 'mime_owned'> | undefined;
      if (!row) throw new NotFoundError(`Agent "${request.agent_id}" has no message "${request.id}".`);
      if (!row.mime_ref || !row.mime_owned)
        throw new NotFoundError('The raw message of this mail is not kept by the postbox (it came through /ingest).');
      const signed = await deps.blobStore.createDownloadUrl({
        key: row.mime_ref,
        expiresInSeconds: RAW_URL_SECONDS,
        contentType: 'message/rfc822',
        filename: `${request.id}.eml`,
      });
      return { url: signed.url, expires_at: isoTimestamp(signed.expiresAt) };
    },

    /**
     * Deletes messages older than the `postbox_retention_days` setting, in
     * batches, each queueing the raw MIME the postbox stored for its messages
     * in the transaction that deletes them, then removing those blobs no
     * remaining message refers to (see `mime-removals.ts`; a blob the store
     * fails to delete stays queued for the `postbox.remove-deleted-mime` job).
     * Raw MIME referenced through /ingest's `mime_ref` belongs to the external
     * MTA and is left alone. Stops before the next batch once `signal` (the
     * job's) aborts.
     * @returns how many messages and blobs were deleted.
     * @throws `signal`'s reason when it aborted (the batches before stay deleted).
     */
    async sweepRetention(options: { signal?: AbortSignal } = {}): Promise<{ messages: number; blobs: number }> {
      const days = await deps.settings.get<number>('postbox_retention_days');
      const cutoff = deps.clock.now() - days * DAY_MS;
      let messages = 0;
      let blobs = 0;
      for (;;) {
        options.signal?.throwIfAborted();
        const rows = (await knex()('postbox_messages')
          .where('created_at', '<', cutoff)
          .orderBy('seq')
          .limit(RETENTION_BATCH)
          .select('seq', 'mime_ref', 'mime_owned')) as Array<Pick<MessageRow, 'seq' | 'mime_ref' | 'mime_owned'>>;
        if (rows.length === 0) break;
        const queued = await knex().transaction(async (trx) => {
          await trx('postbox_messages')
            .whereIn(
              'seq',
              rows.map((row) => row.seq),
            )
            .delete();
          return mimeRemovals.queue(trx, rows);
        });
        messages += rows.length;
        blobs += await mimeRemovals.remove(queued);
        if (rows.length < RETENTION_BATCH) break;
      }
      if (messages > 0) deps.logger.info({ messages, blobs, retention_days: days }, 'postbox retention sweep');
      return { messages, blobs };
    },

    /**
     * Removes the raw MIME of deleted messages still queued because its
     * removal failed or was cut short (at start and every ten minutes by the
     * `postbox.remove-deleted-mime` job), a bounded part of the queue per
     * call. A failure is logged, not thrown; the entries stay queued.
     * @param signal checked between chunks (the job's).
     * @returns the number of blobs deleted.
     * @throws the signal's reason once it aborted.
     */
    removeDeletedMime: (signal?: AbortSignal) => mimeRemovals.remove(undefined, signal),

    /**
     * Reads the local injection model, removes the raw MIME that deletions left queued (see `removeDeletedMime`),
     * warns (once, at `warn`) when `postbox.postmasterAgent` names no agent,
     * then starts the bundled MTA unless `smtp.port` is 0. A port that is taken
     * (EADDRINUSE) or not allowed (EACCES) is skipped with one warning: the
     * API keeps serving, mail can still arrive through /ingest, and
     * `smtpAddress()` is `null`.
     * @throws Error for any other failure to start it (e.g. unreadable TLS certificate files).
     */
    async start(): Promise<void> {
      // Read now, not by the first message scored (/score, /ingest, an SMTP delivery's fallback).
      fallbackScorer.load();
      await mimeRemovals.remove();
      if (config.postmasterAgent !== undefined && !(await agentExists(config.postmasterAgent))) {
        deps.logger.warn(
          { postmaster_agent: config.postmasterAgent },
          `postbox.postmasterAgent "${config.postmasterAgent}" is not an agent: postmaster mail is refused (SMTP 550, /ingest 404) until it is created`,
        );
      }
      if (listener || config.smtp.port === 0) return;
      const port = config.smtp.port === 'auto' ? 0 : config.smtp.port;
      try {
        listener = await startMta(port);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === undefined || !UNBINDABLE.has(code)) throw error;
        deps.logger.warn(
          { host: config.smtp.host, port, code },
          `SMTP listener not started: cannot listen on ${config.smtp.host}:${port} (${code}); mail can still arrive through /ingest`,
        );
      }
    },

    /** The bound SMTP address, or `null` when the MTA is off or not started. */
    smtpAddress(): { host: string; port: number; starttls: boolean } | null {
      return listener ? { ...listener.address, starttls: listener.starttls } : null;
    },

    /** Stops the MTA, its MIME parser threads and relay connections. */
    async stop(): Promise<void> {
      const current = listener;
      listener = null;
      await current?.close();
      await mimeParser.close();
      outbound.close();
    },
  };
}

/** The postbox service. */
export type PostboxService = ReturnType<typeof createPostboxService>;
