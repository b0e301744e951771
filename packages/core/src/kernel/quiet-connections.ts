import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Closes connections that send and receive nothing for `idleMs` while no
 * request is being answered on them (Node's socket timeout with a listener:
 * without one, Node would also cut a request whose handler is still working,
 * such as a commit hashing a large upload). A quiet connection with a request
 * in progress is left to the body deadline and the handler.
 */
export function closeQuietConnections(server: Server, idleMs: number): void {
  const answering = new WeakMap<Socket, number>();
  server.on('request', (request, response) => {
    const socket = request.socket;
    answering.set(socket, (answering.get(socket) ?? 0) + 1);
    response.once('close', () => answering.set(socket, (answering.get(socket) ?? 1) - 1));
  });
  server.setTimeout(idleMs, (socket: Socket) => {
    if ((answering.get(socket) ?? 0) === 0) socket.destroy();
  });
}
