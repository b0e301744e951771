import { isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';

/** One DNS label (RFC 1123): letters, digits and inner hyphens, 1–63 characters. */
const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** A host:port split; `host` keeps IPv6 brackets. */
interface EndpointParts {
  host: string;
  port: number;
}

/** Why `value` is not a `<host>:<port>` endpoint, or the parts when it is. */
export function parseEndpoint(value: string): EndpointParts | { problem: string } {
  const match = /^(\[[^\]]*\]|[^:[\]]*):(\d{1,5})$/.exec(value);
  if (!match) return { problem: 'must be <host>:<port> with an IPv4 address, a bracketed IPv6 address or a DNS name' };
  const [, host = '', portText = ''] = match;
  const port = Number(portText);
  if (port < 1 || port > 65_535) return { problem: 'port must be 1–65535' };
  if (host.startsWith('[')) {
    return isIPv6(host.slice(1, -1)) ? { host, port } : { problem: 'the bracketed host must be an IPv6 address' };
  }
  if (isIPv4(host)) return { host, port };
  const labels = host.split('.');
  if (host.length === 0 || host.length > 253 || !labels.every((label) => DNS_LABEL.test(label))) {
    return { problem: 'host must be an IPv4 address, a bracketed IPv6 address or a DNS name' };
  }
  if (/^\d+$/.test(labels[labels.length - 1] ?? '')) return { problem: 'host looks like an IPv4 address but is not a valid one' };
  return { host, port };
}

/**
 * A WireGuard endpoint `<host>:<port>`: an IPv4 address in dotted-quad form,
 * an IPv6 address in brackets (RFC 3986 §3.2.2) or a DNS name (RFC 1123
 * labels), and a port 1–65535 in decimal. No spaces, no scheme, no path.
 */
export const endpointSchema = z
  .string()
  .max(300)
  .superRefine((value, ctx) => {
    const parsed = parseEndpoint(value);
    if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problem });
  });
