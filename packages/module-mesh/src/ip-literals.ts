import { isIPv6 } from 'node:net';

/**
 * Whether `text` is an IPv6 address without a zone id. Zone ids (`%eth0`,
 * percent-encoded `%25eth0`) are refused, as the gateway's /ip/report
 * refuses them: a zone names an interface of one host, so it means nothing
 * (or something else) on the other hosts, and wg(8) cannot parse an
 * endpoint with a zone that does not exist there. An embedded IPv4 part
 * (`::ffff:1.2.3.4`) must be in plain dotted decimal too (Node's
 * `isIPv6` refuses `::ffff:010.0.0.1`).
 */
export function isIPv6WithoutZone(text: string): boolean {
  return !text.includes('%') && isIPv6(text);
}
