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
 * - `any`: any valid credential; the handler decides (e.g. revoking one's own device).
 * - `none`: no credential; the payload carries its own proof (grant tokens).
 */
export type RouteAuth<Req> =
  | { kind: 'bridge' }
  | {
      kind: 'agent';
      permission: string;
      agents: (body: Req, principal: Principal) => readonly (string | undefined)[];
      bridge?: boolean;
      delegation?: boolean;
    }
  | { kind: 'any' }
  | { kind: 'none' };

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
  /** The Hono context (headers, raw request) for the rare route that needs it. */
  c: Context;
}

/**
 * One POST endpoint of a module, declared with its schemas so the kernel
 * does parsing, validation, authentication, authorization, error mapping
 * and the OpenAPI document once.
 */
export interface RouteDefinition<Req = unknown, Res = unknown, S = unknown> {
  /** Path inside the module, e.g. `/mem/write`. */
  path: string;
  /** One line for the OpenAPI document. */
  summary: string;
  /** Request body schema (an object schema; unknown fields are rejected). */
  request: z.ZodType<Req>;
  /** Response body schema (checked when `http.validateResponses` is on). */
  response: z.ZodType<Res>;
  auth: RouteAuth<Req>;
  /** HTTP status on success (200 by default). */
  status?: 200 | 201;
  /** The module logic. Throw domain errors from `@agentinfra/core` for failures. Return a `Response` to bypass JSON. */
  handler: (ctx: RouteContext<Req, S>) => Promise<Res | Response>;
}

/**
 * Returns a `route()` function whose handlers are typed with the module's
 * service `S`: `const route = routesFor<MemoryService>();`.
 */
export function routesFor<S>() {
  return function route<Req, Res>(definition: RouteDefinition<Req, Res, S>): RouteDefinition<Req, Res, S> {
    return definition;
  };
}
