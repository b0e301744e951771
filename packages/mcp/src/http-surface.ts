import {
  errorBody,
  type HttpMount,
  type Kernel,
  type KernelSurface,
  NotAllowedError,
  NotFoundError,
  RateLimitError,
  readCredential,
  requestIdFrom,
  withinDeadline,
} from '@agentinfra/core';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { asBatchAnswer } from './batch-answer.js';
import {
  answerWithin,
  batchlessRevision,
  MAX_MEMBERS_OVER_API_LIMIT,
  repeatedRequestId,
  requestIds,
  withoutSelfCancellations,
} from './batch-guards.js';
import { omitsUnnamedId, withoutNullId } from './error-id.js';
import { checkJsonBounds } from './json-bounds.js';
import { createMcpServer } from './mcp-server.js';
import { buildToolCatalog } from './tool-catalog.js';

/** Decodes request bodies as UTF-8, refusing invalid bytes (as the HTTP API does) rather than replacing them. */
const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Options of {@link mcpSurface}. */
export interface McpSurfaceOptions {
  /** Mount path (default `/mcp`). */
  path?: string;
  /** Largest MCP request body in bytes (default 8 MiB, room for `artifacts_upload` content); 413 above. */
  bodyLimitBytes?: number;
  /**
   * Milliseconds the SDK may take to answer one POST (default the API's body
   * deadline, `http.bodyTimeoutMs`, 30 s); the requests still unanswered then
   * get JSON-RPC error -32001, and their handlers the SDK's abort signal.
   */
  responseTimeoutMs?: number;
  /** Artifacts up to this many bytes are returned inline by `resources/read` (default 1 MiB). */
  maxInlineBytes?: number;
  /** Server version reported at initialization. */
  version?: string;
}

const CORS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id, x-request-id',
  'access-control-expose-headers': 'www-authenticate, mcp-session-id, x-request-id',
  'access-control-max-age': '600',
};

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...CORS, ...headers } });
}

/** The API's 429 for a refused request: the CONTRACT.md body and `Retry-After`. */
function tooManyRequests(error: RateLimitError): Response {
  return json(429, errorBody(error), { 'retry-after': String(error.retryAfterSeconds) });
}

/**
 * A JSON-RPC error response naming no request: `"id": null` (the request
 * could not be read), or with `omitId` no `id` member at all, as MCP's schema
 * (2025-11-25) writes such an error, for clients of 2025-06-18 and later
 * (see {@link omitsUnnamedId}; the stdio proxy's refusals do the same).
 */
function rpcError(
  status: number,
  code: number,
  message: string,
  options: { headers?: Record<string, string>; data?: unknown; omitId?: boolean } = {},
): Response {
  const error = options.data === undefined ? { code, message } : { code, message, data: options.data };
  return json(status, options.omitId ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', error, id: null }, options.headers);
}

/** The body as one buffer, or `null` past `limit` bytes. */
async function readLimited(chunks: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer | null> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (size > limit) return null;
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

/**
 * The MCP server at `/mcp` (Streamable HTTP, MCP 2025-11-25 and the older
 * revisions the SDK supports), in stateless mode: every POST is
 * authenticated on its own (`Authorization: Bearer <device key or
 * delegation token>`, as the HTTP API) and answered by a fresh SDK server
 * for that credential, so no session state lives in a process and any
 * replica can answer any request. No or unknown credential: 401 with
 * `WWW-Authenticate: Bearer` before any MCP message is read; the bridge key:
 * 403 (it is valid, but not an agent's credential). GET (a server-initiated
 * event stream) and DELETE (ending a session) answer 405: there are no
 * sessions to stream on or end. The mount serves its path alone: a path
 * below it (`/mcp/`, `/mcp/foo`) answers 404 `not_found` in the API's error
 * body, whatever the method or credential, as an unknown API path does. A
 * body over `bodyLimitBytes` answers 413, one nested or branching past the
 * API's JSON bounds (see `checkJsonBounds`) 400, both with a JSON-RPC error
 * (-32600) before the SDK reads it. A body over the
 * API's request body limit (`http.bodyLimitBytes`, which every tool call but
 * `artifacts_upload` goes through) may only be big because of its strings:
 * with more than {@link MAX_MEMBERS_OVER_API_LIMIT} array elements and object
 * members it answers 413 too, before it is parsed. A batch (a JSON array)
 * from a client of MCP 2025-06-18 or later, which removed batches (see
 * `batchlessRevision`), answers 400 with JSON-RPC error -32600 and no `id`,
 * before any of it runs. A `notifications/cancelled`
 * naming a request of the same batch is dropped (the request is answered),
 * the SDK's answer is awaited at most `responseTimeoutMs`
 * (see {@link answerWithin}), and a batch is answered with an array, one of
 * one response included (see {@link asBatchAnswer}). A JSON-RPC error
 * naming no request (these refusals and the SDK transport's own) has no `id`
 * for a client of MCP 2025-06-18 or later and `"id": null` for older ones
 * (see {@link omitsUnnamedId}).
 */
export function mcpSurface(options: McpSurfaceOptions = {}): KernelSurface {
  return (kernel: Kernel): HttpMount => {
    const catalog = buildToolCatalog(kernel.modules);
    const bodyLimit = options.bodyLimitBytes ?? 8 * 1024 * 1024;
    const maxInlineBytes = options.maxInlineBytes ?? 1024 * 1024;
    const apiBodyLimit = kernel.config.http.bodyLimitBytes;
    const responseTimeoutMs = options.responseTimeoutMs ?? kernel.config.http.bodyTimeoutMs;
    const path = options.path ?? '/mcp';
    return {
      path,
      async fetch(request, body, info) {
        // The kernel routes a mount's path and everything below it to the mount; only the path itself is the endpoint.
        const requested = new URL(request.url).pathname;
        if (requested !== path) return json(404, errorBody(new NotFoundError(`No route ${request.method} ${requested}.`)));
        if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: CORS });
        // A refusal naming no request has no id for a client of 2025-06-18 or later, "id": null for older ones.
        const omitId = omitsUnnamedId(request.headers.get('mcp-protocol-version'));
        if (request.method !== 'POST') {
          return rpcError(405, -32000, 'Method not allowed: this server is stateless; send JSON-RPC messages with POST.', {
            headers: { allow: 'POST, OPTIONS' },
            omitId,
          });
        }
        const credential = readCredential(request.headers);
        let principal: Awaited<ReturnType<Kernel['authenticate']>>;
        try {
          principal = await kernel.authenticate(credential, info ? { client: info.client } : undefined);
        } catch (error) {
          if (error instanceof RateLimitError) return tooManyRequests(error);
          throw error;
        }
        if (principal === null) {
          return json(
            401,
            {
              error: {
                code: 'unauthenticated',
                message: 'Send Authorization: Bearer <device key or delegation token>; this one is missing, unknown, expired or revoked.',
              },
            },
            { 'www-authenticate': 'Bearer' },
          );
        }
        if (principal.kind === 'bridge') {
          return json(
            403,
            errorBody(new NotAllowedError('The bridge key is not an MCP credential: use a device key or a delegation token of the agent.')),
          );
        }
        // Only an agent's credential is named to the access log: naming the bridge key would also audit it as a use.
        info?.identify(principal);
        // Each JSON-RPC message counts toward the credential's rate limit, as an API request does (a tool call's own API
        // request counts once more); the request itself counts before its body is read, as on the API.
        const rateLimited = async (cost: number): Promise<Response | null> => {
          if (cost <= 0) return null;
          try {
            await kernel.rateLimit(principal, { cost });
            return null;
          } catch (error) {
            if (error instanceof RateLimitError) return tooManyRequests(error);
            throw error;
          }
        };
        const refused = await rateLimited(1);
        if (refused) return refused;
        // The API's body deadline (http.bodyTimeoutMs): a body sent slowly holds the connection no longer than a JSON route's would.
        const raw = await readLimited(withinDeadline(body, kernel.config.http.bodyTimeoutMs), bodyLimit);
        if (raw === null) {
          return rpcError(413, -32600, `The request body is over ${bodyLimit} bytes.`, { headers: { connection: 'close' }, omitId });
        }
        let text: string;
        try {
          text = utf8.decode(raw);
        } catch {
          return rpcError(400, -32700, 'Parse error: the body is not valid UTF-8.', { omitId });
        }
        const { breach, commas } = checkJsonBounds(text);
        if (breach) return rpcError(400, -32600, breach.message, { data: breach.data, omitId });
        // Past the API's limit only artifacts_upload content can succeed: a body that is big because of its structure
        // (600,000 argument keys) is refused before parsing, which with the SDK's checks would hold the event loop for seconds.
        if (raw.byteLength > apiBodyLimit && commas > MAX_MEMBERS_OVER_API_LIMIT) {
          return rpcError(
            413,
            -32600,
            `The request body is over ${apiBodyLimit} bytes (the API's request body limit) and holds more than ${MAX_MEMBERS_OVER_API_LIMIT} array elements and object members: only a body that is big because of its strings (artifacts_upload content, up to ${bodyLimit} bytes) may pass that limit.`,
            { data: { max_body_bytes: apiBodyLimit, max_members: MAX_MEMBERS_OVER_API_LIMIT }, omitId },
          );
        }
        let parsedBody: unknown;
        try {
          parsedBody = JSON.parse(text);
        } catch {
          return rpcError(400, -32700, 'Parse error: the body is not JSON.', { omitId });
        }
        const revision = batchlessRevision(parsedBody, request.headers.get('mcp-protocol-version'));
        if (revision !== undefined) {
          return rpcError(
            400,
            -32600,
            `Invalid Request: JSON-RPC batches are not part of MCP ${revision} (removed in 2025-06-18): send one message per POST.`,
            { data: { protocol_version: revision }, omitId: true },
          );
        }
        const repeated = repeatedRequestId(parsedBody);
        if (repeated !== undefined) {
          return rpcError(
            400,
            -32600,
            `Invalid Request: the batch holds more than one request with id ${JSON.stringify(repeated)}; give each request of a batch its own id.`,
            { omitId },
          );
        }
        // The rest of a batch: each further message counts too (a batch of 100 listings is 100 requests' worth of answers).
        const refusedBatch = await rateLimited(Array.isArray(parsedBody) ? parsedBody.length - 1 : 0);
        if (refusedBatch) return refusedBatch;
        const requestId = info?.requestId ?? requestIdFrom(request.headers.get('x-request-id'));
        const server = createMcpServer({
          catalog,
          // Tool calls reach the API in process for the MCP client's address (audit events, limits).
          caller: {
            appRequest: async (path, init) => kernel.app.request(path, init, { client: info?.client }),
            credential: credential as string,
            principal,
            requestId,
          },
          maxInlineBytes,
          version: options.version ?? '0.1.0',
        });
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        await server.connect(transport);
        // Not closed afterwards: with JSON responses the transport keeps nothing once it has answered,
        // and the SDK's close() builds an error for every closed connection (a tenth of a request's CPU).
        // A cancellation of a request of the same POST would leave the POST unanswered (the SDK sends no response for a
        // cancelled request, and answers a JSON POST once all its requests have one): the request is answered instead.
        const messages = withoutSelfCancellations(parsedBody);
        const answer = await answerWithin(transport, () => transport.handleRequest(request, { parsedBody: messages }), {
          ids: requestIds(messages),
          timeoutMs: responseTimeoutMs,
          // The SDK's close() aborts the handlers still running and drops the transport's pending state.
          onExpiry: () => void transport.close().catch(() => undefined),
        });
        const answered = omitId ? await withoutNullId(answer) : answer;
        const response = Array.isArray(messages) ? await asBatchAnswer(answered) : answered;
        for (const [name, value] of Object.entries(CORS)) response.headers.set(name, value);
        return response;
      },
    };
  };
}
