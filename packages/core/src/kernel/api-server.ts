import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { getRequestListener, RequestError } from '@hono/node-server';
import { AgentInfraError, errorBody, InputError } from '../errors.js';
import { answerClientErrors } from './client-errors.js';
import { limitConnectionsPerAddress } from './connection-limit.js';

/** What @hono/node-server hands `fetch` besides the request: Node's request and response. */
export interface NodeBindings {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
}

/** Options of {@link createApiServer}. */
export interface ApiServerOptions {
  /** Answers every request that reaches the app (`app.fetch`, wrapped as the kernel likes). */
  fetch: (request: Request, env: NodeBindings) => Response | Promise<Response>;
  /** The host an HTTP/1.0 request without a `Host` header is taken to name (the bind address). */
  hostname: string;
  /** Most connections open at once; those over it are closed as soon as they are accepted. 0: no bound. */
  maxConnections: number;
  /** Most connections open at once per client address (IPv6: per /64); those over it are answered 429 and closed. 0: no bound. */
  maxConnectionsPerAddress: number;
}

/** The 429 answer of a connection over its address's bound. */
function tooManyConnections(max: number): { status: number; body: string } {
  const error = new AgentInfraError(
    429,
    'rate_limited',
    `Too many connections from your address (at most ${max} at once); close idle ones or reuse them.`,
    { details: { max_connections_per_address: max } },
  );
  return { status: error.status, body: JSON.stringify(errorBody(error)) };
}

/** The JSON response for `error`, with `Connection: close`. */
function jsonError(error: AgentInfraError): Response {
  return Response.json(errorBody(error), { status: error.status, headers: { connection: 'close' } });
}

/**
 * @hono/node-server's answer to a request it cannot turn into a web
 * `Request` (a target that is not a path, such as `OPTIONS *`; a `Host`
 * header that is not a host; a backslash in the path): 400
 * `invalid_request` instead of its empty 400. Anything else thrown before
 * the app answered is a 500 `internal`.
 */
function unreadableRequest(error: unknown): Response {
  if (error instanceof RequestError) {
    return jsonError(new InputError('The request target or Host header is not valid: send a path that starts with "/" and a host name.'));
  }
  return jsonError(new AgentInfraError(500, 'internal', 'Internal error.'));
}

/**
 * Creates (does not start) the API's HTTP server: Node's server with no
 * overall request timeout (blob uploads to a mount may take longer than
 * Node's default 300 s; a connection that goes quiet is closed by the
 * kernel's idle timeout, and JSON bodies have `http.bodyTimeoutMs`) and 60 s
 * for the headers, running `options.fetch` through @hono/node-server.
 * Requests that never reach the app still get CONTRACT.md error bodies and
 * `Connection: close`: what Node's parser refuses (see
 * {@link answerClientErrors}), what @hono/node-server cannot read (see
 * {@link unreadableRequest}), and an HTTP/1.1 request without a `Host`
 * header (RFC 9112 §3.2: 400), which Node would answer with an empty body.
 * A connection over `maxConnectionsPerAddress` gets its first request
 * answered 429 `rate_limited` (`Retry-After: 1`) and is closed
 * (see {@link limitConnectionsPerAddress}).
 */
export function createApiServer(options: ApiServerOptions): Server {
  // An HTTP/1 server: its bindings are always Node's request and response (never HTTP/2's).
  const listener = getRequestListener((request, env) => options.fetch(request, env as NodeBindings), {
    hostname: options.hostname,
    errorHandler: unreadableRequest,
  });
  const refusal = tooManyConnections(options.maxConnectionsPerAddress);
  const server = createServer({ requestTimeout: 0, headersTimeout: 60_000, requireHostHeader: false }, (incoming, outgoing) => {
    if (perAddress.refused(incoming.socket)) {
      outgoing.writeHead(refusal.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(refusal.body),
        'retry-after': '1',
        connection: 'close',
      });
      outgoing.end(refusal.body);
      return;
    }
    if (incoming.httpVersion === '1.1' && incoming.headers.host === undefined) {
      const body = JSON.stringify(errorBody(new InputError('An HTTP/1.1 request needs a Host header.')));
      outgoing.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
      outgoing.end(body);
      return;
    }
    void listener(incoming, outgoing);
  });
  if (options.maxConnections > 0) server.maxConnections = options.maxConnections;
  const perAddress = limitConnectionsPerAddress(server, options.maxConnectionsPerAddress);
  answerClientErrors(server);
  return server;
}
