import { FUNCTIONS_BASE, type Principal } from '@agentinfra/core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ACTING_AGENT_FIELD } from './json-schemas.js';
import type { RouteTool } from './tool-catalog.js';
import { type ErrorBody, errorBodyOf, errorResult, successResult } from './tool-errors.js';
import type { InProcessFetch } from './upload-tool.js';

/** Who calls, and how requests reach the API in process. */
export interface CallerContext {
  /** The kernel's `app.request`. */
  appRequest: InProcessFetch;
  /** The caller's own bearer credential, sent with every route call (never logged). */
  credential: string;
  principal: Extract<Principal, { agentId: string }>;
  /** Sent as `x-request-id` so the API's log lines of one MCP request share it. */
  requestId: string;
}

/** The outcome of one route call. */
export type RouteOutcome =
  | { ok: true; body: Record<string, unknown>; text: string }
  | { ok: false; status: number; error: ErrorBody; retryAfterSeconds?: number };

/**
 * POSTs `body` to `/functions/v1/<module><path>` in process with the caller's
 * credential, so authentication, parsing, authorization, rate limits, errors,
 * logs and metrics are exactly the HTTP API's.
 */
export async function invokeRoute(caller: CallerContext, module: string, path: string, body: unknown): Promise<RouteOutcome> {
  const response = await caller.appRequest(`${FUNCTIONS_BASE}/${module}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${caller.credential}`,
      'content-type': 'application/json',
      accept: 'application/json',
      'x-request-id': caller.requestId,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.ok) return { ok: true, body: JSON.parse(text) as Record<string, unknown>, text };
  const retryAfter = Number(response.headers.get('retry-after'));
  return {
    ok: false,
    status: response.status,
    error: errorBodyOf(response.status, text),
    ...((response.status === 429 || response.status === 503) && Number.isFinite(retryAfter) && retryAfter > 0
      ? { retryAfterSeconds: retryAfter }
      : {}),
  };
}

/**
 * Runs a route tool: `agent_id` defaults to the credential's agent, then the
 * route is called as {@link invokeRoute} does. A refused or invalid call is an
 * `isError` result with the CONTRACT.md code and message, never a protocol error.
 */
export async function callRouteTool(
  tool: RouteTool,
  args: Record<string, unknown> | undefined,
  caller: CallerContext,
): Promise<CallToolResult> {
  const input = { ...(args ?? {}) };
  if (tool.actingAgent && input[ACTING_AGENT_FIELD] === undefined) input[ACTING_AGENT_FIELD] = caller.principal.agentId;
  const outcome = await invokeRoute(caller, tool.module, tool.route.path, input);
  return outcome.ok ? successResult(outcome.body, outcome.text) : errorResult(outcome.error, outcome.retryAfterSeconds);
}
