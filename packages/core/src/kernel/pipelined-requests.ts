import type { Socket } from 'node:net';

/**
 * Requests one connection may have in flight at once. HTTP/1.1 pipelining
 * lets a client send many requests without reading an answer; Node parses
 * every request of a socket read (64 KiB: about 1,800 small GETs) before it
 * stops reading, and each would be handled and its answer kept until the
 * client reads. Clients that do not pipeline have one.
 */
export const MAX_PIPELINED_REQUESTS = 32;

/** What this reads of the per-request values @hono/node-server passes to `fetch` (Node's request and response). */
interface NodeBindings {
  incoming: { socket: Socket };
  outgoing: { once(event: 'close', listener: () => void): unknown };
}

/**
 * `fetch` for @hono/node-server's `serve`, closing a connection that has more
 * than `max` requests in flight (pipelined and not yet answered): the
 * request over the limit, and every one after it already parsed from the
 * same read, gets no handler and the socket is destroyed, so one client
 * cannot queue unbounded work or answers (a flood of pipelined
 * `GET /openapi.json` grew the heap until the process died).
 */
export function limitPipelinedRequests<E extends NodeBindings>(
  fetch: (request: Request, env: E) => Response | Promise<Response>,
  max: number = MAX_PIPELINED_REQUESTS,
): (request: Request, env: E) => Response | Promise<Response> {
  const inFlight = new WeakMap<Socket, number>();
  return (request, env) => {
    const socket = env.incoming.socket;
    const count = (inFlight.get(socket) ?? 0) + 1;
    if (socket.destroyed || count > max) {
      socket.destroy();
      return new Response(null, { status: 503, headers: { connection: 'close' } });
    }
    inFlight.set(socket, count);
    env.outgoing.once('close', () => inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1));
    return fetch(request, env);
  };
}
