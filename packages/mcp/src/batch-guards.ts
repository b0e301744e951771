import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  ErrorCode,
  isInitializeRequest,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * Most commas outside strings (array elements and object members after the
 * first of each) a body over the API's request body limit may hold. Only
 * `artifacts_upload` needs such a body, and its size is one string (about ten
 * members in all); a body that is big because of its structure (600,000
 * argument keys) would cost the event loop seconds to parse, validate, copy
 * and serialize, and could never pass the API's limit anyway.
 */
export const MAX_MEMBERS_OVER_API_LIMIT = 1_000;

/**
 * The MCP revisions that have JSON-RPC batches (2025-06-18 removed them),
 * which are also those whose errors naming no request carry `"id": null`.
 */
export const BATCH_REVISIONS: ReadonlySet<string> = new Set(['2024-10-07', '2024-11-05', '2025-03-26']);

/**
 * The MCP revision a batch is sent under when that revision has no batches
 * (2025-06-18 and later), `undefined` when `body` is no batch or its revision
 * has them. The revision is the `MCP-Protocol-Version` header, which clients
 * of 2025-06-18 and later send on every request after initialization (without
 * it the SDK assumes 2025-03-26, as the spec says; a version the SDK does not
 * support is left to its own 400), or, for a batch holding an initialize
 * request, the revision the SDK's server negotiates for it (the requested one
 * when supported, else the latest).
 * @param body the parsed body of a POST.
 * @param headerVersion the request's `MCP-Protocol-Version` header, `null` when absent.
 */
export function batchlessRevision(body: unknown, headerVersion: string | null): string | undefined {
  if (!Array.isArray(body)) return undefined;
  const initialize = body.find((message) => isInitializeRequest(message));
  let revision: string;
  if (initialize !== undefined) {
    const requested = initialize.params.protocolVersion;
    revision = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
  } else {
    revision = headerVersion ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(revision)) return undefined;
  }
  return BATCH_REVISIONS.has(revision) ? undefined : revision;
}

/** Whether `message` is a JSON-RPC request (a method and an id; the SDK checks the rest). */
function isRequest(message: unknown): message is { id: RequestId; method: string } {
  if (typeof message !== 'object' || message === null) return false;
  const { id, method } = message as { id?: unknown; method?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number');
}

/** The ids of the requests in a parsed body (one message or a batch), in order. */
export function requestIds(body: unknown): RequestId[] {
  return (Array.isArray(body) ? body : [body]).filter(isRequest).map((message) => message.id);
}

/**
 * The first request id a batch repeats, if any. JSON-RPC leaves a repeated id
 * to the client, but the SDK answers a POST by id: of two requests sharing
 * one, both would run and only one be answered. Ids match as the SDK's do
 * (`5` and `"5"` differ).
 */
export function repeatedRequestId(body: unknown): RequestId | undefined {
  const seen = new Set<RequestId>();
  for (const id of requestIds(body)) {
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return undefined;
}

/**
 * A batch without the `notifications/cancelled` messages that name a request
 * of the same batch. The request is answered as usual: a request cannot be
 * cancelled before it was answered when both arrive in one POST, and in JSON
 * response mode the SDK answers a POST once every request in it has a
 * response, but sends none for a request it saw cancelled, so the POST would
 * never be answered. Cancellations of other ids are kept (the SDK finds no
 * such request; stateless, a request of another POST is not reachable).
 * Ids match as the SDK's do: `5` and `"5"` are different ids.
 * @returns `body` itself when nothing is removed.
 */
export function withoutSelfCancellations(body: unknown): unknown {
  if (!Array.isArray(body)) return body;
  const ids = new Set(requestIds(body));
  if (ids.size === 0) return body;
  const kept = body.filter((message) => {
    if (typeof message !== 'object' || message === null || 'id' in message) return true;
    const { method, params } = message as { method?: unknown; params?: { requestId?: unknown } };
    return !(method === 'notifications/cancelled' && ids.has(params?.requestId as RequestId));
  });
  return kept.length === body.length ? body : kept;
}

/** How {@link answerWithin} sees the transport: its `send`, through which every response goes. */
export interface ResponseSender {
  send(message: JSONRPCMessage, options?: unknown): Promise<void>;
}

/**
 * Runs `run` (the transport's handling of one POST) and waits at most
 * `timeoutMs` for its answer. Past the deadline, answers HTTP 200 with the
 * responses the transport has sent by then and, for each other request of the
 * body, JSON-RPC error -32001 (the SDK's `RequestTimeout`), in request order,
 * a single message for a single request as the transport does; then
 * `onExpiry` runs (close the transport, which aborts the handlers still
 * running). A backstop: a POST is answered even when the SDK never settles
 * its response.
 * @param transport its `send` is wrapped, to see the responses it sends.
 * @param ids the ids of the body's requests ({@link requestIds}).
 */
export async function answerWithin(
  transport: ResponseSender,
  run: () => Promise<Response>,
  options: { ids: readonly RequestId[]; timeoutMs: number; onExpiry: () => void },
): Promise<Response> {
  const { timeoutMs } = options;
  const sent = new Map<RequestId, JSONRPCMessage>();
  const send = transport.send.bind(transport);
  transport.send = (message, sendOptions) => {
    if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message)) sent.set(message.id, message);
    return send(message, sendOptions);
  };
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  try {
    const answer = await Promise.race([run(), expired]);
    if (answer !== null) return answer;
  } finally {
    clearTimeout(timer);
  }
  options.onExpiry();
  const messages = [...new Set(options.ids)].map(
    (id) =>
      sent.get(id) ?? {
        jsonrpc: '2.0' as const,
        id,
        error: {
          code: ErrorCode.RequestTimeout,
          message: `Request timed out: no answer within ${timeoutMs} ms.`,
          data: { timeout_ms: timeoutMs },
        },
      },
  );
  if (messages.length === 0) return new Response(null, { status: 202 });
  return new Response(JSON.stringify(messages.length === 1 ? messages[0] : messages), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });
}
