import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/** Most addresses /ip/report takes for one host. */
export const MAX_IPS_PER_HOST = 64;

/**
 * The canonical text of an IP address, or `null` when `input` is not one:
 * IPv4 in dotted decimal (four decimal octets, no leading zeros), IPv6 in
 * RFC 5952 form (lowercase, longest zero run compressed), IPv4-mapped
 * IPv6 as `::ffff:a.b.c.d`. A dotted tail elsewhere, such as the deprecated
 * IPv4-compatible `::1.2.3.4`, is the 32 bits it spells (`::102:304`).
 * Zone ids (`%eth0`) are refused.
 */
export function normalizeIp(input: string): string | null {
  if (isIPv4(input)) return ipaddr.IPv4.parse(input).toString();
  if (!isIPv6(input) || input.includes('%')) return null;
  // ipaddr.js reads any dotted tail as IPv4-mapped (`::1.2.3.4` as `::ffff:1.2.3.4`); the WHATWG URL parser
  // turns the text into plain hex groups first, so only the real ::ffff:0:0/96 prefix counts as mapped.
  const address = ipaddr.IPv6.parse(new URL(`http://[${input}]`).hostname.slice(1, -1));
  if (address.isIPv4MappedAddress()) return `::ffff:${address.toIPv4Address().toString()}`;
  return address.toRFC5952String();
}

/**
 * Zod schema of an `ips` list: each entry a valid IPv4/IPv6 address,
 * normalised with {@link normalizeIp}, deduplicated and sorted (IPv4
 * first, then IPv6, each in byte order); at most {@link MAX_IPS_PER_HOST}.
 */
export const ipListSchema = z
  .array(z.string().max(64))
  .max(MAX_IPS_PER_HOST)
  .transform((values, ctx) => {
    const normalized: string[] = [];
    values.forEach((value, index) => {
      const ip = normalizeIp(value);
      if (ip === null) ctx.addIssue({ code: 'custom', path: [index], message: `"${value}" is not an IPv4 or IPv6 address` });
      else normalized.push(ip);
    });
    return sortIps([...new Set(normalized)]);
  });

function sortIps(ips: string[]): string[] {
  const bytes = (ip: string) => ipaddr.parse(ip).toByteArray();
  return ips.sort((a, b) => {
    const x = bytes(a);
    const y = bytes(b);
    if (x.length !== y.length) return x.length - y.length;
    for (let i = 0; i < x.length; i += 1) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
    return 0;
  });
}
