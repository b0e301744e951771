import { isIPv4 } from 'node:net';
import { z } from 'zod';
import { isIPv6WithoutZone } from './ip-literals.js';

/** One DNS label (RFC 1123): letters, digits and inner hyphens, 1–63 characters. */
const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** A host:port split; `host` keeps IPv6 brackets. */
interface EndpointParts {
  host: string;
  port: number;
}

/**
 * A last DNS label that makes the host read as an IPv4 address (decimal or
 * `0x` hex, as the WHATWG URL parser's "ends in a number" rule): the
 * resolver would take it as an inet_aton literal, e.g. `10.0x1` as 10.0.0.1.
 */
const NUMERIC_LABEL = /^(?:\d+|0x[0-9a-f]*)$/i;

/**
 * Why `value` is not a `<host>:<port>` endpoint, or the parts when it is.
 * The host is an IPv4 address in plain dotted decimal, a bracketed IPv6
 * address without a zone id, or a DNS name whose last label is not numeric.
 */
export function parseEndpoint(value: string): EndpointParts | { problem: string } {
  const match = /^(\[[^\]]*\]|[^:[\]]*):(\d{1,5})$/.exec(value);
  if (!match) return { problem: 'must be <host>:<port> with an IPv4 address, a bracketed IPv6 address or a DNS name' };
  const [, host = '', portText = ''] = match;
  const port = Number(portText);
  if (port < 1 || port > 65_535) return { problem: 'port must be 1–65535' };
  if (host.startsWith('[')) {
    const inner = host.slice(1, -1);
    if (inner.includes('%')) {
      return {
        problem: 'zone ids (%…) are refused: a link-local zone names an interface of one host, and wg cannot parse it on the others',
      };
    }
    return isIPv6WithoutZone(inner) ? { host, port } : { problem: 'the bracketed host must be an IPv6 address' };
  }
  if (isIPv4(host)) return { host, port };
  const labels = host.split('.');
  if (host.length === 0 || host.length > 253 || !labels.every((label) => DNS_LABEL.test(label))) {
    return { problem: 'host must be an IPv4 address, a bracketed IPv6 address or a DNS name' };
  }
  if (NUMERIC_LABEL.test(labels[labels.length - 1] ?? '')) {
    return { problem: 'host looks like an IPv4 address but is not one in plain dotted decimal' };
  }
  return { host, port };
}

/**
 * A WireGuard endpoint `<host>:<port>`: an IPv4 address in plain dotted
 * decimal (no leading zeros, no octal, hex or short forms), an IPv6 address
 * in brackets (RFC 3986 §3.2.2) without a zone id (`%eth0`, `%25eth0`), or a
 * DNS name (RFC 1123 labels, the last one not numeric), and a port 1–65535
 * in decimal. No spaces, no scheme, no path.
 */
export const endpointSchema = z
  .string()
  .max(300)
  .superRefine((value, ctx) => {
    const parsed = parseEndpoint(value);
    if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problem });
  });

/**
 * A stored endpoint as it may be handed to other agents (/netmap, the
 * `Endpoint` line of /wg_config), or `null` when it is no longer valid:
 * endpoints stored before a rule was tightened (an IPv6 zone id such as
 * `[fe80::1%eth0]:51820`) would make wg refuse the whole file on every
 * host that reaches the peer, so they are left out until the peer
 * registers again; WireGuard then waits for that peer to connect first.
 */
export function usableEndpoint(stored: string): string | null {
  return 'problem' in parseEndpoint(stored) ? null : stored;
}

/**
 * The port of a stored endpoint (its `ListenPort` in the agent's own
 * /wg_config), read from the trailing `:<port>` even when the host part is
 * no longer valid, or `null` when there is no port 1–65535.
 */
export function portOfStoredEndpoint(stored: string): number | null {
  const parsed = parseEndpoint(stored);
  if ('port' in parsed) return parsed.port;
  const port = Number(/:(\d{1,5})$/.exec(stored)?.[1] ?? Number.NaN);
  return port >= 1 && port <= 65_535 ? port : null;
}
