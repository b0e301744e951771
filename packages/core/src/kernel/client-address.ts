import type { IncomingMessage } from 'node:http';

/**
 * The address of the client that sent a request: the socket's peer, or with
 * `trustProxyHops` N > 0 the N-th entry from the right of `X-Forwarded-For`
 * (each trusted proxy appends the address it received the request from, so
 * entries further left are the client's own claims). Falls back to the peer
 * when the header has fewer entries, and to `unknown` off Node's HTTP server.
 */
export function clientAddress(options: {
  incoming: IncomingMessage | undefined;
  forwardedFor: string | undefined;
  trustProxyHops: number;
}): string {
  const peer = options.incoming?.socket?.remoteAddress ?? 'unknown';
  if (options.trustProxyHops === 0 || !options.forwardedFor) return peer;
  const hops = options.forwardedFor
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return hops[hops.length - options.trustProxyHops] ?? peer;
}
