import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** The request a connection is answering, as the idle check reads it. */
interface InProgress {
  request: IncomingMessage;
  response: ServerResponse;
}

/**
 * Whether the peer, not the server, holds up a request that has been silent
 * for the idle timeout: its body stopped arriving (not complete, and nothing
 * read but left unconsumed, so the server is not the slow side), or the
 * response waits for the client to read what was already sent
 * (`writableNeedDrain`: a download nobody reads).
 */
function stalledByPeer({ request, response }: InProgress): boolean {
  if (!request.complete && request.readableLength === 0) return true;
  return response.writableNeedDrain;
}

/**
 * Closes connections that send and receive nothing for `idleMs` (Node's
 * socket timeout with a listener) when no request is being answered on
 * them, or when the request in progress is held up by the client (see
 * {@link stalledByPeer}): a signed-URL upload that stops sending or a
 * download that stops reading no longer holds a socket, a file handle and a
 * temporary file for as long as the client likes. A request whose handler
 * is still working, such as a commit hashing a large upload, is left to it.
 * Between requests, a keep-alive connection also stays open for `idleMs`
 * (Node's `keepAliveTimeout`, 5 s by default): longer than the idle
 * timeouts of the clients and proxies in front (HTTP clients reuse an idle
 * connection for a few seconds, load balancers for about 60 s), so that the
 * server does not close a connection just as one of them sends the next
 * request on it, which that client would see reset (a proxy answers 502).
 */
export function closeQuietConnections(server: Server, idleMs: number): void {
  server.keepAliveTimeout = idleMs;
  const answering = new WeakMap<Socket, InProgress[]>();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const list = answering.get(socket) ?? [];
    const entry = { request, response };
    list.push(entry);
    answering.set(socket, list);
    response.once('close', () => list.splice(list.indexOf(entry), 1));
  });
  server.setTimeout(idleMs, (socket: Socket) => {
    const list = answering.get(socket) ?? [];
    if (list.length === 0 || list.some(stalledByPeer)) socket.destroy();
    // Spared: armed again, since only traffic re-arms the timer, and a client may stall once the server caught up.
    else socket.setTimeout(idleMs);
  });
}
