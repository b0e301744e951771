import { MAX_JSON_DEPTH } from '@agentinfra/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ErrorCode,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListToolsResultSchema,
  McpError,
  ReadResourceResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { REQUEST_SCHEMAS } from './invalid-params.js';
import { forwardedError, RpcError } from './rpc-error.js';
import { StdioLineTransport } from './stdio-line-transport.js';
import { errorResult } from './tool-errors.js';

/** Options of {@link runStdioProxy}. */
export interface StdioProxyOptions {
  /** The agentinfra server: its base URL (`/mcp` is appended), or the MCP endpoint itself. */
  url: string;
  /** A device key or delegation token. */
  key: string;
  /** Where diagnostics go (default: stderr). Nothing but MCP messages is ever written to stdout. */
  log?: (line: string) => void;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

/** The server's MCP endpoint from a base URL (with or without `/functions/v1` or `/mcp`). */
export function mcpEndpointOf(url: string): URL {
  const endpoint = new URL(url);
  const path = endpoint.pathname.replace(/\/+$/, '').replace(/\/functions\/v1$/, '');
  endpoint.pathname = path.endsWith('/mcp') ? path : `${path}/mcp`;
  return endpoint;
}

/** Codes of refusals whose body carries none (a JSON-RPC error body has a number), by HTTP status. */
const REFUSAL_CODES: Record<number, string> = { 400: 'invalid_request', 413: 'payload_too_large', 429: 'rate_limited' };

/**
 * The body of the HTTP error response the server refused a request with,
 * which the SDK puts in its message after "Error POSTing to endpoint: ",
 * parsed; `undefined` when it holds no JSON object.
 */
function refusalBodyOf(error: StreamableHTTPError): unknown {
  const start = error.message.indexOf('{');
  if (start < 0) return undefined;
  try {
    return JSON.parse(error.message.slice(start));
  } catch {
    return undefined;
  }
}

/** The `error` of a CONTRACT.md error body the server refused a request with; empty when there is none. */
function refusalOf(error: StreamableHTTPError): { code?: unknown; message?: unknown } {
  return (refusalBodyOf(error) as { error?: { code?: unknown; message?: unknown } } | undefined)?.error ?? {};
}

/** A JSON-RPC error response, as `/mcp` refuses a request before it runs (its `id` null, absent or the request's). */
const errorResponseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
});

/**
 * Whether `error` is a JSON-RPC error the server answered. The SDK raises
 * McpErrors of its own too (the request timed out, the connection closed),
 * which are failures to get an answer, not answers.
 */
export function fromServer(error: unknown): error is McpError {
  return error instanceof McpError && error.code !== ErrorCode.RequestTimeout && error.code !== ErrorCode.ConnectionClosed;
}

/**
 * The JSON-RPC error the server answered a request with, to pass on as it
 * came (code, message without the SDK's prefix, `data`): one in a JSON-RPC
 * response ({@link fromServer}), or the body of an HTTP error response, as
 * `/mcp` refuses a request before it runs (400 -32600 for a body past the
 * JSON bounds, 413 for one too large). `null` when the server answered none:
 * it could not be reached, the request timed out, or the HTTP error's body is
 * not a JSON-RPC error (401, 429 and the API's other CONTRACT.md bodies).
 */
export function answeredError(error: unknown): RpcError | null {
  if (fromServer(error)) return forwardedError(error);
  if (!(error instanceof StreamableHTTPError)) return null;
  const body = errorResponseSchema.safeParse(refusalBodyOf(error));
  return body.success ? new RpcError(body.data.error.code, body.data.error.message, body.data.error.data) : null;
}

/** Why an upstream call failed, as a CONTRACT.md code and a one-line message (the server's own when it answered). */
function failureOf(error: unknown): { code: string; message: string } {
  // JSON.stringify, recursive in V8, overflows the stack on arguments thousands of levels deep before anything is sent.
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return {
      code: 'invalid_request',
      message: `The arguments are nested too deep to send: tool arguments may nest ${MAX_JSON_DEPTH} levels.`,
    };
  }
  const status = error instanceof StreamableHTTPError ? (error.code ?? 0) : 0;
  if (status < 400) {
    return { code: 'upstream_unavailable', message: `The agentinfra server could not be reached: ${(error as Error).message}` };
  }
  if (status === 401) return { code: 'unauthenticated', message: 'The server refused the key: it is unknown, expired or revoked.' };
  const refusal = refusalOf(error as StreamableHTTPError);
  return {
    code: typeof refusal.code === 'string' ? refusal.code : (REFUSAL_CODES[status] ?? (status >= 500 ? 'internal' : 'request_failed')),
    message: typeof refusal.message === 'string' ? refusal.message : `The agentinfra server answered HTTP ${status}.`,
  };
}

/**
 * Counts the requests `transport` receives and the answers it sends (wrapping
 * the handlers its server installed on connect).
 * @returns a function resolving once every request received so far has its answer sent.
 */
function countAnswers(transport: Transport): () => Promise<void> {
  let open = 0;
  let settled: (() => void) | null = null;
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && 'id' in message) open += 1;
    receive?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    try {
      await send(message, options);
    } finally {
      if ('id' in message && ('result' in message || 'error' in message)) {
        open -= 1;
        if (open === 0) settled?.();
      }
    }
  };
  return () => (open === 0 ? Promise.resolve() : new Promise<void>((resolve) => (settled = resolve)));
}

/**
 * `agentinfra mcp`: serves the tools and resources of the agentinfra server at
 * `url` over stdio, forwarding every request to its `/mcp` endpoint (Streamable
 * HTTP) with `key`. The tool list is the server's own, so it is generated from
 * the same route declarations and filtered by what `key` may call. A JSON-RPC
 * error the server answers, in a response or as the body of an HTTP refusal
 * (see {@link answeredError}), is passed on unchanged, for every request; a
 * tool call that gets no answer (unreachable, key expired) is an `isError`
 * result. A line on stdin
 * that is not a JSON-RPC message is answered with JSON-RPC error -32700 or
 * -32600 and named on the log (see {@link StdioLineTransport}).
 * @returns when stdin closes and the requests read before are answered.
 * @throws Error when the first connection fails (bad URL, refused key), after logging why.
 */
export async function runStdioProxy(options: StdioProxyOptions): Promise<void> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const endpoint = mcpEndpointOf(options.url);
  const upstream = new Client({ name: 'agentinfra-stdio', version: '0.1.0' });
  const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${options.key}` } } });
  try {
    await upstream.connect(transport);
  } catch (error) {
    const failure = failureOf(error);
    throw new Error(`${endpoint.origin}${endpoint.pathname}: ${failure.message}`);
  }
  const info = upstream.getServerVersion() ?? { name: 'agentinfra', version: '0.1.0' };
  const server = new Server(info, {
    capabilities: upstream.getServerCapabilities() ?? { tools: {}, resources: {} },
    instructions: upstream.getInstructions(),
  });
  /**
   * Sends a request upstream; a JSON-RPC error it answers is rethrown as it
   * came ({@link answeredError}), and a failure to get an answer (unreachable,
   * key refused, an HTTP error without a JSON-RPC body) becomes
   * -32603 Internal error with the CONTRACT.md code first in the message and
   * the error body as `data` (the SDK would otherwise send the HTTP status
   * as the JSON-RPC code).
   */
  const forward: typeof upstream.request = (request, resultSchema, options) =>
    upstream.request(request, resultSchema, options).catch((error: unknown) => {
      const answered = answeredError(error);
      if (answered) throw answered;
      const failure = failureOf(error);
      log(`agentinfra mcp: ${request.method}: ${failure.message}`);
      throw new RpcError(-32603, `${failure.code}: ${failure.message}`, { error: failure });
    });
  server.setRequestHandler(REQUEST_SCHEMAS.listTools, (request) =>
    forward({ method: 'tools/list', params: request.params }, ListToolsResultSchema),
  );
  server.setRequestHandler(REQUEST_SCHEMAS.callTool, async (request) => {
    try {
      return await upstream.request({ method: 'tools/call', params: request.params }, CallToolResultSchema);
    } catch (error) {
      const answered = answeredError(error);
      if (answered) throw answered;
      const failure = failureOf(error);
      log(`agentinfra mcp: ${request.params.name}: ${failure.message}`);
      return errorResult({ error: failure });
    }
  });
  server.setRequestHandler(REQUEST_SCHEMAS.listResourceTemplates, (request) =>
    forward({ method: 'resources/templates/list', params: request.params }, ListResourceTemplatesResultSchema),
  );
  server.setRequestHandler(REQUEST_SCHEMAS.listResources, (request) =>
    forward({ method: 'resources/list', params: request.params }, ListResourcesResultSchema),
  );
  server.setRequestHandler(REQUEST_SCHEMAS.readResource, (request) =>
    forward({ method: 'resources/read', params: request.params }, ReadResourceResultSchema),
  );
  const stdin = options.stdin ?? process.stdin;
  const stdio = new StdioLineTransport({
    stdin,
    stdout: options.stdout ?? process.stdout,
    onInvalidLine: (description) => log(`agentinfra mcp: ${description}`),
  });
  const closed = new Promise<void>((resolve) => {
    stdin.once('end', resolve);
    stdio.onclose = () => resolve();
  });
  await server.connect(stdio);
  const answered = countAnswers(stdio);
  log(`agentinfra mcp: serving ${endpoint.origin}${endpoint.pathname} over stdio`);
  await closed;
  // A client that writes its requests and then closes stdin (a pipe) still gets every answer; each is bounded by the SDK's request timeout.
  await answered();
  await server.close();
  await upstream.close();
}
