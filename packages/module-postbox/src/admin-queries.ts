import { ConflictError, createListCursor, isoTimestamp, keysetPage, NotFoundError, whereAfterKeyset } from '@agentinfra/core';
import { z } from 'zod';
import type {
  AdminAgentPageRequest,
  AdminDeleteQuarantinedResponse,
  AdminGetMessageResponse,
  AdminListAddressesResponse,
  AdminListMessagesRequest,
  AdminListMessagesResponse,
  AdminListWebhooksResponse,
  AdminMessageRequest,
  AdminRedeliverRequest,
  AdminRedeliverResponse,
  AdminReleaseResponse,
  AdminSummaryResponse,
} from './admin-schemas.js';
import { eventData, MAX_SEQ, type MessageRow, messageView } from './message-view.js';
import type { MimeRemovals } from './mime-removals.js';
import type { PostboxDeps } from './service-deps.js';
import { type WebhookEvent, type Webhooks, webhookJobKeyPrefix } from './webhooks.js';

const DAY_MS = 86_400_000;

const addressCursor = createListCursor({ schema: z.strictObject({ a: z.string() }), field: 'cursor' });
const seqCursor = createListCursor({ schema: z.strictObject({ s: z.int().min(0).max(MAX_SEQ) }), field: 'cursor' });
const webhookCursor = createListCursor({ schema: z.strictObject({ c: z.int(), i: z.string() }), field: 'cursor' });

const countOf = (row: unknown) => Number((row as { n: number | string } | undefined)?.n ?? 0);

/** Columns of a message an operator listing carries (no bodies). */
const SUMMARY_COLUMNS = [
  'seq',
  'id',
  'agent_id',
  'direction',
  'folder',
  'to_address',
  'from_address',
  'subject',
  'injection_score',
  'quarantined',
  'read_at',
  'status',
  'created_at',
  'attachments',
] as const;

type SummaryRow = Pick<MessageRow, (typeof SUMMARY_COLUMNS)[number]>;

interface WebhookAdminRow {
  id: string;
  agent_id: string;
  url: string;
  events: string;
  created_at: number | string;
  rotated_at: number | string | null;
  last_delivery_at: number | string | null;
  last_delivery_ok: boolean | number | null;
  last_delivery_status: number | null;
  last_delivery_error: string | null;
}

/**
 * What operators see and fix in the postbox (the console): addresses and
 * mail across agents, newest first, with their injection scores; the
 * quarantine queue; releasing a quarantined message (it becomes a normal
 * message and the agent's `message.received` webhooks are delivered) or
 * deleting it (its raw MIME through `mimeRemovals`); webhooks with their
 * last delivery result; counts.
 */
export function createPostboxAdmin(deps: PostboxDeps, webhooks: Pick<Webhooks, 'enqueue'>, mimeRemovals: MimeRemovals) {
  const knex = () => deps.sql.knex;

  async function requireMessage(id: string): Promise<MessageRow> {
    const row = (await knex()('postbox_messages').where({ id }).first()) as MessageRow | undefined;
    if (!row) throw new NotFoundError(`Message "${id}" does not exist.`);
    return row;
  }

  async function requireQuarantined(id: string): Promise<MessageRow> {
    const row = await requireMessage(id);
    if (!row.quarantined) throw new ConflictError(`Message "${id}" is not quarantined.`);
    return row;
  }

  return {
    /** Addresses in code-point order with their agents, optionally one agent's. @throws InputError for a foreign cursor. */
    async listAddresses(input: AdminAgentPageRequest): Promise<AdminListAddressesResponse> {
      const query = knex()('postbox_addresses').select('address', 'agent_id', 'created_at');
      if (input.agent_id !== undefined) query.where({ agent_id: input.agent_id });
      if (input.cursor !== null) query.where('address', '>', addressCursor.decode(input.cursor).a);
      const rows = (await query.orderBy('address').limit(input.limit + 1)) as Array<{
        address: string;
        agent_id: string;
        created_at: number | string;
      }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) => addressCursor.encode({ a: last.address }));
      return {
        addresses: page.map((row) => ({ address: row.address, agent_id: row.agent_id, created_at: isoTimestamp(Number(row.created_at)) })),
        next_cursor,
      };
    },

    /**
     * Messages newest first (without bodies), optionally one agent's, one
     * direction, only quarantined or only not quarantined.
     * @throws InputError for a cursor this list did not make.
     */
    async listMessages(input: AdminListMessagesRequest): Promise<AdminListMessagesResponse> {
      const query = knex()('postbox_messages').select([...SUMMARY_COLUMNS]);
      if (input.agent_id !== undefined) query.where({ agent_id: input.agent_id });
      if (input.direction !== undefined) query.where({ direction: input.direction });
      if (input.quarantined !== undefined) query.where({ quarantined: input.quarantined });
      if (input.cursor !== null) query.where('seq', '<', seqCursor.decode(input.cursor).s);
      const rows = (await query.orderBy('seq', 'desc').limit(input.limit + 1)) as SummaryRow[];
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) => seqCursor.encode({ s: Number(last.seq) }));
      return {
        messages: page.map((row) => ({
          id: row.id,
          agent_id: row.agent_id,
          direction: row.direction,
          folder: row.folder,
          to: row.to_address,
          from: row.from_address,
          subject: row.subject,
          injection_score: Number(row.injection_score),
          quarantined: Boolean(row.quarantined),
          read: row.read_at !== null,
          status: row.status,
          attachments: (JSON.parse(row.attachments) as unknown[]).length,
          created_at: isoTimestamp(Number(row.created_at)),
        })),
        next_cursor,
      };
    },

    /**
     * One message in full (subject, text, HTML source, headers), quarantined or not: for an operator to review.
     * @throws NotFoundError when it does not exist.
     */
    async getMessage(input: AdminMessageRequest): Promise<AdminGetMessageResponse> {
      return messageView(await requireMessage(input.id), true);
    },

    /**
     * Releases a quarantined message: it becomes a normal message and the
     * agent's webhooks subscribed to `message.received` get that event, in
     * the same transaction.
     * @throws NotFoundError when it does not exist; ConflictError (409) when it is not quarantined.
     */
    async release(input: AdminMessageRequest): Promise<AdminReleaseResponse> {
      const row = await requireQuarantined(input.id);
      const now = deps.clock.now();
      const released = await knex().transaction(async (trx) => {
        const updated = await trx('postbox_messages')
          .where({ id: row.id, quarantined: true })
          .update({ quarantined: false, updated_at: now });
        if (updated === 0) return false;
        const type: WebhookEvent = 'message.received';
        await webhooks.enqueue({
          trx,
          agentId: row.agent_id,
          messageId: row.id,
          type,
          data: eventData(messageView({ ...row, quarantined: false }, false)),
        });
        return true;
      });
      if (!released) throw new ConflictError(`Message "${input.id}" is not quarantined.`);
      return { id: row.id, agent_id: row.agent_id, quarantined: false as const, released_at: isoTimestamp(now) };
    },

    /**
     * Deletes a quarantined message, queueing the raw MIME the postbox stored
     * for it in the same transaction, then removes that blob unless another
     * message refers to it (see `mime-removals.ts`). A blob the store fails
     * to delete stays queued for the `postbox.remove-deleted-mime` job; the
     * message is deleted either way.
     * @throws NotFoundError when it does not exist; ConflictError (409) when it is not quarantined.
     */
    async deleteQuarantined(input: AdminMessageRequest): Promise<AdminDeleteQuarantinedResponse> {
      const row = await requireQuarantined(input.id);
      const queued = await knex().transaction(async (trx) => {
        const deleted = await trx('postbox_messages').where({ id: row.id, quarantined: true }).delete();
        if (deleted === 0) return null;
        return mimeRemovals.queue(trx, [row]);
      });
      if (queued === null) throw new ConflictError(`Message "${input.id}" is not quarantined.`);
      await mimeRemovals.remove(queued);
      return { id: row.id, agent_id: row.agent_id, deleted: true as const };
    },

    /**
     * Webhooks oldest first, optionally one agent's, with their last delivery
     * result (never a secret).
     * @throws InputError for a cursor this list did not make.
     */
    async listWebhooks(input: AdminAgentPageRequest): Promise<AdminListWebhooksResponse> {
      const query = knex()('postbox_webhooks').select(
        'id',
        'agent_id',
        'url',
        'events',
        'created_at',
        'rotated_at',
        'last_delivery_at',
        'last_delivery_ok',
        'last_delivery_status',
        'last_delivery_error',
      );
      if (input.agent_id !== undefined) query.where({ agent_id: input.agent_id });
      if (input.cursor !== null) {
        const after = webhookCursor.decode(input.cursor);
        whereAfterKeyset(query, 'asc', ['created_at', after.c], ['id', after.i]);
      }
      const rows = (await query.orderBy(['created_at', 'id']).limit(input.limit + 1)) as WebhookAdminRow[];
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) =>
        webhookCursor.encode({ c: Number(last.created_at), i: last.id }),
      );
      return {
        webhooks: page.map((row) => ({
          webhook_id: row.id,
          agent_id: row.agent_id,
          url: row.url,
          events: JSON.parse(row.events) as WebhookEvent[],
          created_at: isoTimestamp(Number(row.created_at)),
          rotated_at: row.rotated_at === null ? null : isoTimestamp(Number(row.rotated_at)),
          last_delivery:
            row.last_delivery_at === null
              ? null
              : {
                  at: isoTimestamp(Number(row.last_delivery_at)),
                  ok: Boolean(row.last_delivery_ok),
                  status: row.last_delivery_status === null ? null : Number(row.last_delivery_status),
                  error: row.last_delivery_error,
                },
        })),
        next_cursor,
      };
    },

    /**
     * Puts every failed delivery of a webhook (each event whose
     * `webhookMaxAttempts` attempts all failed, within the 30 days failed jobs
     * are kept) back in the queue, due now, with a fresh count of attempts and
     * back-off: after the receiver is fixed, nothing it missed is lost. Each
     * goes out with its first `webhook-id`, so a receiver that got one after
     * all drops it as a duplicate (Standard Webhooks). Deliveries still being
     * retried are left to their back-off.
     * @returns `{ webhook_id, agent_id, requeued }`.
     * @throws NotFoundError when the webhook does not exist.
     */
    async redeliverWebhook(input: AdminRedeliverRequest): Promise<AdminRedeliverResponse> {
      return knex().transaction(async (trx) => {
        const row = (await trx('postbox_webhooks').where({ id: input.webhook_id }).first('id', 'agent_id')) as
          | { id: string; agent_id: string }
          | undefined;
        if (!row) throw new NotFoundError(`Webhook "${input.webhook_id}" does not exist.`);
        const requeued = await deps.jobs.retry({ dedupeKeyPrefix: webhookJobKeyPrefix(row.id), trx });
        return { webhook_id: row.id, agent_id: row.agent_id, requeued };
      });
    },

    /** Counts: addresses, mail in and out since 00:00 UTC today, quarantined messages, webhooks. */
    async summary(): Promise<AdminSummaryResponse> {
      const now = deps.clock.now();
      const today = now - (now % DAY_MS);
      const [addresses, todayRows, quarantined, hooks] = await Promise.all([
        knex()('postbox_addresses').count({ n: '*' }).first(),
        knex()('postbox_messages').select('direction').count({ n: '*' }).where('created_at', '>=', today).groupBy('direction') as Promise<
          Array<{ direction: string; n: number | string }>
        >,
        knex()('postbox_messages').count({ n: '*' }).where({ quarantined: true }).first(),
        knex()('postbox_webhooks').count({ n: '*' }).first(),
      ]);
      return {
        addresses: countOf(addresses),
        mail_today: {
          in: countOf(todayRows.find((row) => row.direction === 'in')),
          out: countOf(todayRows.find((row) => row.direction === 'out')),
        },
        quarantined: countOf(quarantined),
        webhooks: countOf(hooks),
      };
    },
  };
}

/** The operator part of the postbox (see {@link createPostboxAdmin}). */
export type PostboxAdmin = ReturnType<typeof createPostboxAdmin>;
