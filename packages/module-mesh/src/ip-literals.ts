import { isIPv6 } from 'node:net';

/** One IPv4 part in plain decimal: 0–255, no leading zeros (except `0` itself), no sign. */
const DECIMAL_OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]\\d|\\d)';
const DOTTED_DECIMAL = new RegExp(`^${DECIMAL_OCTET}(?:\\.${DECIMAL_OCTET}){3}$`);

/**
 * Whether `text` is an IPv4 address in plain dotted decimal: exactly four
 * parts 0–255 with no leading zeros (except `0` itself). The legacy
 * inet_aton notations are refused, because they read differently from how
 * they look: `010.0.0.1` is octal (8.0.0.1), `0x64.0x40.0.1` hex,
 * `1681915905` a single number, `10.1` a short form.
 */
export function isDottedDecimalIPv4(text: string): boolean {
  return DOTTED_DECIMAL.test(text);
}

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
