import { isIP } from 'node:net';
import { z } from 'zod';

/** A DNS label: letters, digits, `-` inside, and `_` (Docker Compose service names), at most 63 characters. */
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
/** A host name: labels separated by dots (a trailing dot allowed), at most 253 characters. */
const HOST_NAME = new RegExp(`^(?=.{1,254}$)${LABEL}(?:\\.${LABEL})*\\.?$`);

/**
 * Whether `host` can name an address to listen on: an IPv4 or IPv6 address
 * (without brackets) or a host name. Anything else would reach the resolver
 * at listen time and stop `serve` with a raw `getaddrinfo ENOTFOUND`.
 */
export function isBindHost(host: string): boolean {
  return isIP(host) !== 0 || HOST_NAME.test(host);
}

/** A listen address in configuration: {@link isBindHost}, so a bad `AGENTINFRA_HOST` is a configuration error naming it. */
export const bindHostSchema = z.string().refine(isBindHost, 'must be an IP address (127.0.0.1, 0.0.0.0, ::) or a host name (localhost)');
