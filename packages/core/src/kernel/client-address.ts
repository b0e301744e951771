import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

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

/**
 * The group a limit per client address counts `address` in: an IPv4
 * address by itself (also when written IPv4-mapped, `::ffff:a.b.c.d`), an
 * IPv6 address by its /64 network (`2001:db8:1:2::/64`), since one
 * subscriber's network gets at least a /64 (RFC 6177) and its hosts pick
 * addresses in it at will (RFC 8981); anything else (`unknown`) as it is.
 */
export function addressGroup(address: string): string {
  // Node's isIPv4 takes only the canonical dotted decimal (no leading zeros), so it is the group as written.
  if (isIPv4(address)) return address;
  const bare = address.split('%')[0] ?? address;
  if (!isIPv6(bare)) return address;
  const parsed = ipaddr.IPv6.parse(bare);
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toNormalizedString()}/64`);
  return `${network.toRFC5952String()}/64`;
}
