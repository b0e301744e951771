import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressGroup } from './client-address.js';

/** Milliseconds a connection over its address's bound has to send the request it is answered 429 on. */
export const REFUSED_CONNECTION_MS = 5_000;

/** Which connections a per-address bound refused; see {@link limitConnectionsPerAddress}. */
export interface ConnectionLimit {
  /** Whether `socket` was accepted over its address's bound (its first request is answered 429, then it is closed). */
  refused(socket: Socket): boolean;
}

/**
 * Bounds the connections `server` keeps open per client address group
 * (`addressGroup`: an IPv4 address, an IPv6 /64) at `max`, counted by the
 * socket's peer address (behind a reverse proxy, the proxy's). A connection
 * accepted over the bound is not counted and gets {@link REFUSED_CONNECTION_MS}
 * to send its request, which the caller answers 429 and closes
 * ({@link ConnectionLimit.refused}); then it is destroyed. So one address
 * holding idle connections cannot take the whole of `http.maxConnections`
 * from everyone else. `max` 0: no bound (nothing is refused).
 */
export function limitConnectionsPerAddress(server: Server, max: number): ConnectionLimit {
  const refusedSockets = new WeakSet<Socket>();
  if (max <= 0) return { refused: () => false };
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const group = addressGroup(socket.remoteAddress ?? 'unknown');
    const count = (open.get(group) ?? 0) + 1;
    if (count > max) {
      refusedSockets.add(socket);
      socket.setTimeout(REFUSED_CONNECTION_MS, () => socket.destroy());
      return;
    }
    open.set(group, count);
    socket.once('close', () => {
      const left = (open.get(group) ?? 1) - 1;
      if (left > 0) open.set(group, left);
      else open.delete(group);
    });
  });
  return { refused: (socket) => refusedSockets.has(socket) };
}
