import { createHash } from 'node:crypto';
import {
  ConflictError,
  checkTargetField,
  InputError,
  isoTimestamp,
  JobInterruptedError,
  JobLeaseLostError,
  NotFoundError,
  newId,
  newWebhookSecret,
  resealSealedColumn,
  TargetLookupFailure,
} from '@agentinfra/core';
import type { Knex } from 'knex';
import { z } from 'zod';
import type {
  AgentRequest,
  DeleteWebhookRequest,
  DeleteWebhookResponse,
  ListWebhooksResponse,
  RegisterWebhookRequest,
  RegisterWebhookResponse,
  RotateWebhookRequest,
  RotateWebhookResponse,
  WebhookView,
} from './schemas.js';
import type { PostboxDeps } from './service-deps.js';

/** Event types postbox webhooks carry (CONTRACT.md "Signed deliveries"). */
export const WEBHOOK_EVENTS = ['message.received', 'message.quarantined', 'message.sent', 'message.failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const webhookEventSchema = z.enum(WEBHOOK_EVENTS);

/** Name of the durable job that delivers one event to one webhook. */
export const WEBHOOK_JOB = 'postbox.webhook';

/** The start of the dedupe key of every {@link WEBHOOK_JOB} job of one webhook (the event id follows). */
export function webhookJobKeyPrefix(webhookId: string): string {
  return `${WEBHOOK_JOB}:${webhookId}:`;
}

/** Characters of a failed delivery's error kept for operators. */
const DELIVERY_ERROR_CHARS = 500;

/** Webhooks one agent may register. */
const MAX_WEBHOOKS_PER_AGENT = 20;

interface WebhookRow {
  id: string;
  agent_id: string;
  url: string;
  events: string;
  secret_sealed: string;
  previous_sealed: string | null;
  previous_expires_at: number | string | null;
  created_at: number | string;
  rotated_at: number | string | null;
}

/** The payload of a {@link WEBHOOK_JOB} job (no secret: payloads are stored in plain text). */
export const webhookJobPayloadSchema = z.object({
  webhook_id: z.string(),
  event_id: z.string(),
  type: webhookEventSchema,
  data: z.record(z.string(), z.unknown()),
});
export type WebhookJobPayload = z.infer<typeof webhookJobPayloadSchema>;

/** One delivery job to enqueue: its payload and the agent whose webhook it goes to. */
export interface WebhookDelivery {
  agentId: string;
  payload: WebhookJobPayload;
}

/**
 * The job runner's fairness group of an agent's deliveries: at most
 * `jobs.groupConcurrency` of them are in flight at once, so receivers that
 * hang hold back only their own agent's deliveries. Grouped by agent rather
 * than by receiver origin because the agent is what a tenant is: an agent
 * may register up to 20 webhooks on as many origins, which would otherwise
 * take that many times the cap.
 */
function webhookGroupOf(agentId: string): string {
  return `${WEBHOOK_JOB}:${agentId}`;
}

/** Which webhooks an event must reach beyond those subscribed to it: `true` = all of the agent's. */
export type ForcedWebhooks = true | ReadonlySet<string>;

/** One event of one message to fan out to the agent's webhooks. */
export interface WebhookEventToEnqueue {
  agentId: string;
  messageId: string;
  type: WebhookEvent;
  data: Record<string, unknown>;
  /** Webhooks a rule forces this event to reach beyond those subscribed to it. */
  force?: ForcedWebhooks | undefined;
}

const sealContext = (webhookId: string) => `postbox-webhook:${webhookId}`;

/** A stable event id (`webhook-id` header) for one event of one message: the same on every retry. */
export function eventIdOf(messageId: string, type: WebhookEvent): string {
  return `evt_${createHash('sha256').update(`${messageId}:${type}`).digest('base64url').slice(0, 22)}`;
}

/** A registered webhook as the fan-out of events sees it (a row of `postbox_webhooks`). */
export interface WebhookSubscription {
  id: string;
  agent_id: string;
  /** JSON array of the {@link WebhookEvent}s it subscribes to. */
  events: string;
}

/**
 * The delivery jobs `events` fan out to: one per event and webhook of the
 * event's agent that subscribes to its type or that a rule forces it to reach.
 * @param subscriptions webhooks of (at least) the events' agents; others are ignored.
 */
export function deliveriesOf(events: readonly WebhookEventToEnqueue[], subscriptions: readonly WebhookSubscription[]): WebhookDelivery[] {
  const deliveries: WebhookDelivery[] = [];
  if (subscriptions.length === 0) return deliveries;
  for (const event of events) {
    const eventId = eventIdOf(event.messageId, event.type);
    for (const row of subscriptions) {
      if (row.agent_id !== event.agentId) continue;
      const subscribed = (JSON.parse(row.events) as string[]).includes(event.type);
      const forced = event.force === true || (event.force?.has(row.id) ?? false);
      if (subscribed || forced) {
        deliveries.push({ agentId: row.agent_id, payload: { webhook_id: row.id, event_id: eventId, type: event.type, data: event.data } });
      }
    }
  }
  return deliveries;
}

/** Webhook registration, rotation, fan-out of events into durable jobs, and delivery. */
export function createWebhooks(deps: PostboxDeps) {
  const knex = () => deps.sql.knex;
  const seal = (webhookId: string, secret: string) => deps.secretBox.seal({ plaintext: secret, context: sealContext(webhookId) });
  const open = (webhookId: string, sealed: string) => deps.secretBox.open({ sealed, context: sealContext(webhookId) });

  async function owned(agentId: string, webhookId: string): Promise<WebhookRow> {
    const row = (await knex()('postbox_webhooks').where({ id: webhookId, agent_id: agentId }).first()) as WebhookRow | undefined;
    if (!row) throw new NotFoundError(`Agent "${agentId}" has no webhook "${webhookId}".`);
    return row;
  }

  /**
   * Stores a delivery attempt's outcome on the webhook (shown to operators, #16).
   * Never throws: a failed write is logged and the delivery goes on.
   */
  async function recordDelivery(webhookId: string, outcome: { ok: boolean; status: number | null; error: string | null }) {
    try {
      await knex()('postbox_webhooks')
        .where({ id: webhookId })
        .update({
          last_delivery_at: deps.clock.now(),
          last_delivery_ok: outcome.ok,
          last_delivery_status: outcome.status,
          last_delivery_error: outcome.error === null ? null : outcome.error.slice(0, DELIVERY_ERROR_CHARS),
        });
    } catch (error) {
      deps.logger.warn({ err: error, webhook_id: webhookId }, 'could not record the webhook delivery result');
    }
  }

  /** Enqueues one durable delivery job per delivery inside `trx`, in its agent's {@link webhookGroupOf} (see {@link deliveriesOf}). */
  async function enqueueDeliveries(trx: Knex.Transaction, deliveries: readonly WebhookDelivery[]): Promise<void> {
    for (const { agentId, payload } of deliveries) {
      await deps.jobs.enqueue({
        name: WEBHOOK_JOB,
        payload,
        dedupeKey: `${webhookJobKeyPrefix(payload.webhook_id)}${payload.event_id}`,
        maxAttempts: deps.moduleConfig.webhookMaxAttempts,
        group: webhookGroupOf(agentId),
        trx,
      });
    }
  }

  const view = (row: WebhookRow): WebhookView => ({
    webhook_id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as WebhookEvent[],
    created_at: isoTimestamp(Number(row.created_at)),
    rotated_at: row.rotated_at === null ? null : isoTimestamp(Number(row.rotated_at)),
    previous_expires_at: row.previous_expires_at === null ? null : isoTimestamp(Number(row.previous_expires_at)),
  });

  return {
    /**
     * Seals again, under the current master key, the webhook secrets (current
     * and previous) that an older key sealed (see `resealSealedColumn`); a
     * secret rotated meanwhile keeps its new value.
     * @returns how many sealed secrets were resealed.
     * @throws UnopenedSealedValuesError after the walk when some could not be opened; the others are resealed all the same.
     */
    async resealSecrets(options: { signal?: AbortSignal } = {}): Promise<number> {
      let resealed = 0;
      for (const sealedColumn of ['secret_sealed', 'previous_sealed'] as const) {
        resealed += await resealSealedColumn({
          sql: deps.sql,
          secretBox: deps.secretBox,
          table: 'postbox_webhooks',
          keyColumns: ['id'],
          sealedColumn,
          contextOf: (row: { id: string }) => sealContext(row.id),
          what: 'postbox webhook secret',
          signal: options.signal,
        });
      }
      return resealed;
    },

    /**
     * Registers a webhook after checking its URL (HTTPS, public address after
     * DNS resolution, unless the operator allows private callbacks).
     * @returns its id and URL, plus the generated secret when none was supplied (shown once).
     * @throws InputError (400) for a refused URL; ConflictError (409) when the
     *   agent already has a webhook for this URL or has 20 webhooks.
     */
    async register(body: RegisterWebhookRequest): Promise<RegisterWebhookResponse> {
      await checkTargetField(deps.delivery, body.url, 'url');
      const existing = (await knex()('postbox_webhooks').where({ agent_id: body.agent_id }).select('url')) as Array<{ url: string }>;
      if (existing.some((row) => row.url === body.url)) {
        throw new ConflictError('This agent already has a webhook for this URL; use /webhook/rotate to change its secret.');
      }
      if (existing.length >= MAX_WEBHOOKS_PER_AGENT)
        throw new ConflictError(`An agent can register at most ${MAX_WEBHOOKS_PER_AGENT} webhooks.`);
      const id = newId('whk_');
      const secret = body.secret ?? newWebhookSecret();
      const events = [...new Set(body.events ?? WEBHOOK_EVENTS)].sort();
      try {
        await knex()('postbox_webhooks').insert({
          id,
          agent_id: body.agent_id,
          url: body.url,
          events: JSON.stringify(events),
          secret_sealed: seal(id, secret),
          previous_sealed: null,
          previous_expires_at: null,
          created_at: deps.clock.now(),
          rotated_at: null,
        });
      } catch (error) {
        if (deps.sql.isUniqueViolation(error)) throw new ConflictError('This agent already has a webhook for this URL.');
        throw error;
      }
      return { webhook_id: id, url: body.url, events, ...(body.secret === undefined ? { secret } : {}) };
    },

    /**
     * Gives the webhook a new secret; the current one keeps signing (both
     * signatures in every delivery) until `previous_expires_at` (now + the
     * configured grace). A second rotation inside the grace window drops the
     * oldest secret at once.
     * @throws NotFoundError (404) when the agent has no such webhook.
     */
    async rotate(body: RotateWebhookRequest): Promise<RotateWebhookResponse> {
      const secret = body.secret ?? newWebhookSecret();
      // Compare-and-set on the secret read: of two rotations at once, the later one keeps the earlier one's secret
      // as the previous (as one after the other would), instead of writing over it with the secret both read.
      for (;;) {
        const row = await owned(body.agent_id, body.webhook_id);
        const now = deps.clock.now();
        const previousExpiresAt = now + deps.moduleConfig.webhookGraceSeconds * 1000;
        const updated = await knex()('postbox_webhooks')
          .where({ id: row.id, secret_sealed: row.secret_sealed })
          .update({
            secret_sealed: seal(row.id, secret),
            previous_sealed: row.secret_sealed,
            previous_expires_at: previousExpiresAt,
            rotated_at: now,
          });
        if (updated === 1) return { webhook_id: row.id, secret, previous_expires_at: isoTimestamp(previousExpiresAt) };
      }
    },

    /** The agent's webhooks (never their secrets), oldest first. */
    async list(body: AgentRequest): Promise<ListWebhooksResponse> {
      const rows = (await knex()('postbox_webhooks')
        .where({ agent_id: body.agent_id })
        .orderBy([{ column: 'created_at' }, { column: 'id' }])) as WebhookRow[];
      return { webhooks: rows.map(view) };
    },

    /** Deletes a webhook; deliveries still queued for it are dropped. @throws NotFoundError (404). */
    async remove(body: DeleteWebhookRequest): Promise<DeleteWebhookResponse> {
      const row = await owned(body.agent_id, body.webhook_id);
      await knex().transaction(async (trx) => {
        await trx('postbox_webhooks').where({ id: row.id }).delete();
        await deps.jobs.cancel({ dedupeKeyPrefix: webhookJobKeyPrefix(row.id), trx });
      });
      return { webhook_id: row.id, deleted: true };
    },

    /**
     * Enqueues one durable delivery job per webhook of `agentId` that
     * subscribes to `type` (or is forced by a rule), inside `trx` so the jobs
     * exist exactly when the message does.
     */
    async enqueue(options: { trx: Knex.Transaction } & WebhookEventToEnqueue) {
      const subscriptions = (await options
        .trx('postbox_webhooks')
        .where({ agent_id: options.agentId })
        .select('id', 'agent_id', 'events')) as WebhookSubscription[];
      await enqueueDeliveries(options.trx, deliveriesOf([options], subscriptions));
    },

    enqueueDeliveries,

    /**
     * One delivery attempt (the job runner retries with exponential back-off
     * and jitter). Signed with the current secret, and the previous one during
     * its grace window. A deleted webhook or a target the SSRF guard now
     * refuses ends the job without retry.
     * @throws Error on a network error or a non-2xx answer, so the job is retried.
     */
    async deliver(options: { payload: unknown; signal: AbortSignal }) {
      const payload = webhookJobPayloadSchema.parse(options.payload);
      const row = (await knex()('postbox_webhooks').where({ id: payload.webhook_id }).first()) as WebhookRow | undefined;
      if (!row) return;
      const secrets = [open(row.id, row.secret_sealed)];
      if (row.previous_sealed && row.previous_expires_at !== null && Number(row.previous_expires_at) > deps.clock.now()) {
        secrets.push(open(row.id, row.previous_sealed));
      }
      let result: { ok: boolean; status: number };
      try {
        result = await deps.delivery.send({
          url: row.url,
          secrets,
          messageId: payload.event_id,
          type: payload.type,
          data: payload.data,
          timeoutMs: deps.moduleConfig.webhookTimeoutMs,
          signal: options.signal,
        });
      } catch (error) {
        const reason: unknown = options.signal.reason;
        // Stopped by the queue (shutdown, or the job's lease went to another worker), not by the receiver: the attempt
        // that carries on records the outcome.
        if (reason instanceof JobInterruptedError || reason instanceof JobLeaseLostError) throw reason;
        await recordDelivery(row.id, { ok: false, status: null, error: (error as Error).message });
        if (error instanceof InputError && !(error instanceof TargetLookupFailure)) {
          deps.logger.warn({ webhook_id: row.id, reason: error.message }, 'webhook target refused; delivery dropped');
          return;
        }
        throw error;
      }
      await recordDelivery(row.id, { ok: result.ok, status: result.status, error: result.ok ? null : `answered HTTP ${result.status}` });
      if (!result.ok) throw new Error(`Webhook ${row.id} answered HTTP ${result.status}.`);
    },
  };
}

/** The webhook part of the postbox service. */
export type Webhooks = ReturnType<typeof createWebhooks>;
