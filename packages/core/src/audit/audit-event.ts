import { z } from 'zod';
import type { Principal } from '../auth/principal.js';

/**
 * How a security event ended:
 * - `success`: the operation was done;
 * - `denied`: the caller was refused (401, 403, 429 on authentication);
 * - `failed`: the operation was attempted and failed (not found, invalid, conflict, internal error).
 */
export const auditOutcomeSchema = z.enum(['success', 'denied', 'failed']);
/** See {@link auditOutcomeSchema}. */
export type AuditOutcome = z.infer<typeof auditOutcomeSchema>;

/**
 * Kind of credential behind an event: the three credentials of CONTRACT.md,
 * `anonymous` for requests without a valid one (refused authentications) and
 * `system` for the server's own work (jobs, renewals).
 */
export const auditActorKindSchema = z.enum(['bridge', 'device', 'delegation', 'anonymous', 'system']);
/** See {@link auditActorKindSchema}. */
export type AuditActorKind = z.infer<typeof auditActorKindSchema>;

/** Who acted: the credential's kind, its id (`dev_…`, `dlg_…`; none for the bridge key) and the agent it acts as. */
export const auditActorSchema = z.object({
  kind: auditActorKindSchema,
  id: z.string().max(128).nullable(),
  agent_id: z.string().max(128).nullable(),
});
/** See {@link auditActorSchema}. */
export type AuditActor = z.infer<typeof auditActorSchema>;

/** Action names: `<area>.<verb>` in lower case, e.g. `secret.get`, `device.issue`, `bridge.use`. */
export const auditActionSchema = z
  .string()
  .max(64)
  .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, 'must be <area>.<verb> in lower case');

/**
 * What a module (or the kernel) records. Missing request fields (`client`,
 * `requestId`) are stored as null; `actor` defaults to `system`.
 */
export interface AuditEventInput {
  /** `<area>.<verb>`, see {@link auditActionSchema}. */
  action: string;
  outcome: AuditOutcome;
  /** What was acted on, e.g. `agent:alice/secret:db_password` (a key name, never a value), at most 512 characters. */
  target?: string | null;
  /** The caller: a principal as the kernel authenticated it, or an explicit actor. */
  actor?: Principal | AuditActor | null;
  /** The agent the event concerns (the subject), when it is not the actor's own agent. */
  agentId?: string | null;
  /** The caller's address as the API sees it (see `clientAddress`). */
  client?: string | null;
  /** The request id (`x-request-id`) the event belongs to. */
  requestId?: string | null;
  /** Small, non-secret facts (a count, an HTTP status); stored as JSON, at most 2 000 characters. */
  detail?: Record<string, unknown> | null;
  /** Event time in ms since the epoch; default the audit log's clock. */
  at?: number;
}

/** One stored event as `/audit/list` returns it. */
export const auditEventSchema = z.object({
  id: z.string(),
  seq: z.number().int(),
  time: z.string(),
  actor: auditActorSchema,
  agent_id: z.string().nullable(),
  action: z.string(),
  target: z.string().nullable(),
  outcome: auditOutcomeSchema,
  client: z.string().nullable(),
  request_id: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()).nullable(),
  /** SHA-256 (hex) chaining this row to the previous one. */
  hash: z.string(),
});
/** See {@link auditEventSchema}. */
export type AuditEvent = z.infer<typeof auditEventSchema>;

/** The actor of a principal (`null` principal: anonymous). */
export function auditActorOf(principal: Principal | AuditActor | null | undefined): AuditActor {
  if (!principal) return { kind: 'anonymous', id: null, agent_id: null };
  if ('agent_id' in principal) return principal;
  if (principal.kind === 'bridge') return { kind: 'bridge', id: null, agent_id: null };
  if (principal.kind === 'device') return { kind: 'device', id: principal.deviceId, agent_id: principal.agentId };
  return { kind: 'delegation', id: principal.delegationId, agent_id: principal.agentId };
}

/** The actor of the server's own work (jobs, renewals). */
export const SYSTEM_ACTOR: AuditActor = { kind: 'system', id: null, agent_id: null };
