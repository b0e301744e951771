import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressGroup } from './client-address.js';

/** Milliseconds a connection over its address's bound is kept, in all, for the request it is answered 429 on. */
export const REFUSED_CONNECTION_MS = 5_000;

/**
 * Connections over the bound one address may hold at once while they wait
 * for their 429; past this many, a further one is closed as soon as it is
 * accepted, unanswered.
 */
export const REFUSED_CONNECTIONS_PER_ADDRESS = 16;

/** Which connections a per-address bound refused; see {@link limitConnectionsPerAddress}. */
export interface ConnectionLimit {
  /** Whether `socket` was accepted over its address's bound (its first request is answered 429, then it is closed). */
  refused(socket: Socket): boolean;
}

/** Counts per address group, with the entry removed at zero. */
class GroupCounts {
  private readonly counts = new Map<string, number>();
  get(group: string): number {
    return this.counts.get(group) ?? 0;
  }
  /** Adds one for `group` until `socket` closes. */
  hold(group: string, socket: Socket): void {
    this.counts.set(group, this.get(group) + 1);
    socket.once('close', () => {
      const left = this.get(group) - 1;
      if (left > 0) this.counts.set(group, left);
      else this.counts.delete(group);
    });
  }
}

/**
 * Bounds the connections `server` keeps open per client address group
 * (`addressGroup`: an IPv4 address, an IPv6 /64) at `max`, counted by the
 * socket's peer address. A connection accepted over the bound is not
 * counted with them: it has {@link REFUSED_CONNECTION_MS} in all (not reset
 * by traffic) to send the request the caller answers 429 on
 * ({@link ConnectionLimit.refused}), then it is destroyed; an address with
 * {@link REFUSED_CONNECTIONS_PER_ADDRESS} such connections open has further
 * ones closed at once, unanswered. So one address cannot take the whole of
 * `http.maxConnections` from everyone else, with idle connections or with
 * refused ones. `max` 0: no bound (nothing is refused).
 * @param options.refusedConnectionMs the time a refused connection is kept (default {@link REFUSED_CONNECTION_MS}).
 */
export function limitConnectionsPerAddress(server: Server, max: number, options: { refusedConnectionMs?: number } = {}): ConnectionLimit {
  const refusedConnectionMs = options.refusedConnectionMs ?? REFUSED_CONNECTION_MS;
  const refusedSockets = new WeakSet<Socket>();
  if (max <= 0) return { refused: () => false };
  const open = new GroupCounts();
  const waiting = new GroupCounts();
  server.on('connection', (socket: Socket) => {
    const group = addressGroup(socket.remoteAddress ?? 'unknown');
    if (open.get(group) < max) {
      open.hold(group, socket);
      return;
    }
    if (waiting.get(group) >= REFUSED_CONNECTIONS_PER_ADDRESS) {
      socket.destroy();
      return;
    }
    refusedSockets.add(socket);
    waiting.hold(group, socket);
    const deadline = setTimeout(() => socket.destroy(), refusedConnectionMs);
    deadline.unref();
    socket.once('close', () => clearTimeout(deadline));
  });
  return { refused: (socket) => refusedSockets.has(socket) };
}
