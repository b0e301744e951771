import type { Context } from 'hono';
import type { z } from 'zod';
import type { Principal } from '../auth/principal.js';

/**
 * Which credential a route takes (CONTRACT.md "Credentials"):
 * - `bridge`: the bridge key only.
 * - `agent`: a device key of one of the agents `agents(body)` names, or a
 *   delegation from that agent carrying `permission`, or (unless
 *   `bridge: false`) the bridge key; `delegation: false` refuses delegation
 *   tokens.
 * - `any`: any valid credential; the handler decides (e.g. revoking one's own
 *   device). With `permission`, a delegation must carry it (checked before the
 *   handler), and generated surfaces list the route for such delegations;
 *   `delegation: false` refuses delegation tokens (before the handler, and
 *   left out of the OpenAPI security).
 * - `none`: no credential; the payload carries its own proof (grant tokens).
 *   The client address's failed-authentication limit still applies: an
 *   address over it gets 429 before the body is read, and a handler's
 *   `AuthenticationError` (a bad proof) counts as a failure.
 */
export type RouteAuth<Req, Perm extends string = string> =
  | { kind: 'bridge' }
  | {
      kind: 'agent';
      /** One of the module's own declared permissions (a typo fails to compile with `routesFor<S, Perm>()`). */
      permission: Perm;
      agents: (body: Req, principal: Principal) => readonly (string | undefined)[];
      bridge?: boolean;
      delegation?: boolean;
    }
  | { kind: 'any'; permission?: Perm; delegation?: boolean }
  | {
      kind: 'none';
      /** The body field carrying the caller's own proof (a grant token): an unknown, expired or revoked one is 401. */
      credentialField?: string;
    };

/**
 * What a route does to state (the MCP tool annotations of the same names).
 * - `readOnly`: changes nothing.
 * - `destructive`: may delete or overwrite data.
 * - `idempotent`: calling it twice with the same body has the effect of calling it once (safe to retry).
 * - `openWorld`: reaches outside this service (mail, HTTP callbacks, ACME, DNS).
 */
export interface RouteEffects {
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  openWorld?: boolean;
}

/**
 * How a route's calls are recorded in the audit log (security events: keys
 * issued, secrets read, hosts claimed, …). The kernel records every call
 * whose credential was valid, with its outcome, after the response is ready.
 */
export interface RouteAudit<Req, Res> {
  /** `<area>.<verb>`, e.g. `secret.get`. */
  action: string;
  /**
   * What was acted on, from the parsed body and, on success, the result
   * (`undefined` on failure), e.g. `agent:alice/secret:db_password`. Names and
   * ids only: never a secret value, key, token or free text.
   */
  target: (body: Req, result: Res | undefined) => string;
  /** The agent the event concerns; default the body's `agent_id`, else the caller's agent. */
  agent?: (body: Req) => string | undefined;
}

/** What a handler receives. */
export interface RouteContext<Req, S> {
  /** The parsed, validated request body. */
  body: Req;
  /** The authenticated caller; `null` only on `auth: { kind: 'none' }` routes. */
  principal: Principal | null;
  /**
   * For `agent` routes, the agent the caller acts as: the principal's agent,
   * or with the bridge key the first agent the payload names.
   */
  agentId: string;
  /** The module's service. */
  service: S;
  /**
   * Names the agent this call's audit event concerns, over `audit.agent`,
   * the body's `agent_id` and the caller's agent: for a route whose body
   * names only a record (a revocation by id with the bridge key), the agent
   * the handler found it belongs to.
   */
  auditAgent(agentId: string): void;
  /** The Hono context (headers, raw request) for the rare route that needs it. */
  c: Context;
}

/**
 * One POST endpoint of a module, declared with its schemas so the kernel
 * does parsing, validation, authentication, authorization, error mapping
 * and the OpenAPI document once.
 */
export interface RouteDefinition<Req = unknown, Res = unknown, S = unknown, Perm extends string = string> {
  /** Path inside the module, e.g. `/mem/write`. */
  path: string;
  /** One line for the OpenAPI document. */
  summary: string;
  /**
   * A paragraph for people and models: what the route does, when to use it,
   * what it returns and its side effects. Used by the OpenAPI document, the
   * docs page and the MCP tool description (falls back to `summary`).
   */
  description?: string;
  /** A realistic request body, shown in the OpenAPI document and the docs page. */
  example?: Req;
  /**
   * What calling the route does to state, for generated surfaces (MCP tool
   * annotations, the typed client's retry policy). Omitted flags are false,
   * except `openWorld` which is false for every route that touches only this service.
   */
  effects?: RouteEffects;
  /**
   * The MCP tool name (stable snake_case, e.g. `memory_query`), or `false`
   * to keep the route out of the MCP server. Defaults to one derived from the
   * module and path.
   */
  tool?: string | false;
  /** Records each call in the audit log (see {@link RouteAudit}). */
  audit?: RouteAudit<Req, Res>;
  /** Request body schema (an object schema; unknown fields are rejected). */
  request: z.ZodType<Req>;
  /** Response body schema (checked when `http.validateResponses` is on). */
  response: z.ZodType<Res>;
  auth: RouteAuth<Req, Perm>;
  /** HTTP status on success (200 by default). */
  status?: 200 | 201;
  /**
   * Other media types the handler answers in when the request's `Accept`
   * asks for them (it returns a `Response` then): media type → what the
   * body holds, e.g. `{ 'text/plain': 'The wg-quick configuration itself.' }`.
   * Documented in OpenAPI as text bodies beside the JSON one.
   */
  alternateMedia?: Readonly<Record<string, string>>;
  /** The module logic. Throw domain errors from `@agentinfra/core` for failures. Return a `Response` to bypass JSON. */
  handler: (ctx: RouteContext<Req, S>) => Promise<Res | Response>;
}

/**
 * Returns a `route()` function whose handlers are typed with the module's
 * service `S` and whose `auth.permission` must be one of the module's
 * permissions `Perm`: `const route = routesFor<MemoryService, MemoryPermission>();`.
 */
export function routesFor<S, Perm extends string = string>() {
  return function route<Req, Res>(definition: RouteDefinition<Req, Res, S, Perm>): RouteDefinition<Req, Res, S, Perm> {
    return definition;
  };
}
