import type { Knex } from 'knex';
import { z } from 'zod';
import { keysetPage } from '../pagination/keyset.js';
import { createListCursor } from '../pagination/list-cursor.js';
import { type Clock, isoTimestamp } from '../ports/clock.js';
import { createGroupCommit } from '../services/group-commit.js';
import { newTimeOrderedId } from '../time-ordered-id.js';
import type { AuditRow } from './audit-chain.js';
import { type AuditEvent, type AuditEventInput, type AuditOutcome, auditActionSchema, auditActorOf } from './audit-event.js';
import { appendRows, type ChainReport, listRows, sweepRows, type UnchainedRow, verifyChain } from './audit-store.js';

const TARGET_LIMIT = 512;
const CLIENT_LIMIT = 64;
const REQUEST_ID_LIMIT = 128;
const DETAIL_LIMIT = 2_000;
/** Events appended per transaction when many arrive at once. */
const MAX_BATCH = 256;
/** Attempts of one append when another writer got in between (SQLite `SQLITE_BUSY` from a second process). */
const APPEND_ATTEMPTS = 5;

/** Filters of {@link AuditLog.list}. */
export interface AuditListQuery {
  /** Events whose subject or acting agent is this agent. */
  agentId?: string;
  /** Only these actions. */
  actions?: readonly string[];
  /** From this instant (ms since the epoch, inclusive). */
  since?: number;
  /** Before this instant (ms since the epoch, exclusive). */
  until?: number;
  /** 1..500. */
  limit: number;
  /** `next_cursor` of the previous page. */
  cursor?: string | null;
}

/**
 * The append-only, tamper-evident record of security events (agent
 * created, device issued, secret read, bridge key used, …). Every row
 * stores the SHA-256 of its predecessor's hash and its own fields, so an
 * edited or deleted row breaks the chain and {@link AuditLog.verify} finds
 * it. Appends are serialised on one state row (a row lock on PostgreSQL,
 * the write lock on SQLite), so the chain stays linear with any number of
 * replicas. Available to modules as the `audit` port.
 */
export interface AuditLog {
  /**
   * Appends one event and resolves once it is committed (events arriving
   * together share one transaction).
   * @throws Error for an action name that is not `<area>.<verb>` or a `detail` over 2 000 characters
   *   (programming errors), or the database's error when the append fails.
   */
  record(event: AuditEventInput): Promise<void>;
  /**
   * Events newest first, filtered, with keyset pagination.
   * @throws InputError (400) for a cursor this list did not make.
   */
  list(query: AuditListQuery): Promise<{ events: AuditEvent[]; next_cursor: string | null }>;
  /** Walks the whole chain (from the retention anchor to the head). */
  verify(options?: { onProgress?: (checked: number, total: number) => void }): Promise<ChainReport>;
  /** Removes events older than `before` (ms since the epoch), keeping the chain verifiable. @returns how many. */
  sweep(options: { before: number }): Promise<{ removed: number }>;
}

const cursorCodec = createListCursor({ schema: z.object({ s: z.number().int().positive() }), field: 'cursor' });

function clip(value: string | null | undefined, limit: number): string | null {
  if (value === undefined || value === null || value === '') return null;
  return value.length <= limit ? value : `${value.slice(0, limit - 1)}…`;
}

function toEvent(row: AuditRow): AuditEvent {
  return {
    id: row.id,
    seq: row.seq,
    time: isoTimestamp(row.at),
    actor: { kind: row.actor_kind as AuditEvent['actor']['kind'], id: row.actor_id, agent_id: row.actor_agent },
    agent_id: row.agent_id,
    action: row.action,
    target: row.target,
    outcome: row.outcome as AuditOutcome,
    client: row.client,
    request_id: row.request_id,
    detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
    hash: row.hash,
  };
}

/**
 * Builds the audit log over the core tables (see the core migration `core_audit`).
 * @param options.enabled false makes `record` a no-op (benchmarks); listing, verifying and sweeping still work.
 */
export function createAuditLog(options: { knex: Knex; clock: Clock; enabled?: boolean }): AuditLog {
  const { knex, clock } = options;
  const enabled = options.enabled !== false;

  async function append(rows: readonly UnchainedRow[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await appendRows(knex, rows);
        return;
      } catch (error) {
        const code = String((error as { code?: unknown } | null)?.code ?? '');
        if (attempt >= APPEND_ATTEMPTS || !code.startsWith('SQLITE_BUSY')) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt));
      }
    }
  }

  const commit = createGroupCommit<UnchainedRow, void>(
    async (rows) => {
      await append(rows);
      return rows.map(() => ({ ok: true as const, value: undefined }));
    },
    { maxBatch: MAX_BATCH, maxInFlight: 1 },
  );

  return {
    async record(event) {
      auditActionSchema.parse(event.action);
      if (!enabled) return;
      const detail = event.detail ? JSON.stringify(event.detail) : null;
      if (detail !== null && detail.length > DETAIL_LIMIT)
        throw new Error(`audit detail of ${event.action} is over ${DETAIL_LIMIT} characters`);
      const actor = auditActorOf(event.actor);
      const at = event.at ?? clock.now();
      await commit.submit({
        id: newTimeOrderedId('aud_', at),
        at,
        actor_kind: actor.kind,
        actor_id: clip(actor.id, 128),
        actor_agent: clip(actor.agent_id, 128),
        agent_id: clip(event.agentId ?? actor.agent_id, 128),
        action: event.action,
        target: clip(event.target, TARGET_LIMIT),
        outcome: event.outcome,
        client: clip(event.client, CLIENT_LIMIT),
        request_id: clip(event.requestId, REQUEST_ID_LIMIT),
        detail,
      });
    },
    async list(query) {
      const position = query.cursor ? cursorCodec.decode(query.cursor) : undefined;
      const rows = await listRows(knex, {
        agentId: query.agentId,
        actions: query.actions,
        since: query.since,
        until: query.until,
        beforeSeq: position?.s,
        limit: query.limit + 1,
      });
      const { page, next_cursor } = keysetPage(rows, query.limit, (last) => cursorCodec.encode({ s: last.seq }));
      return { events: page.map(toEvent), next_cursor };
    },
    verify: (verifyOptions) => verifyChain(knex, verifyOptions?.onProgress),
    async sweep({ before }) {
      return { removed: await sweepRows(knex, before) };
    },
  };
}
