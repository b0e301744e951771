import ipaddr from 'ipaddr.js';

/**
 * Why an IP address may or may not receive deliveries. `public` is the only
 * allowed class; every other value names the range that refused it.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'carrier-grade-nat'
  | 'unique-local'
  | 'link-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'ipv4-translated'
  | 'not-global-unicast'
  | 'invalid';

/** The verdict on one address. */
export interface AddressVerdict {
  /** Whether a delivery may connect to it. */
  allowed: boolean;
  /** The range it falls in (see {@link AddressClass}). */
  class: AddressClass;
  /** For IPv4-mapped/-compatible IPv6 forms, the embedded IPv4 address that was judged. */
  embeddedIpv4?: string;
}

const IPV4_CLASSES: Record<string, AddressClass> = {
  unicast: 'public',
  loopback: 'loopback',
  private: 'private',
  carrierGradeNat: 'carrier-grade-nat',
  linkLocal: 'link-local',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
};

const IPV6_CLASSES: Record<string, AddressClass> = {
  unicast: 'public',
  loopback: 'loopback',
  uniqueLocal: 'unique-local',
  linkLocal: 'link-local',
  deprecatedSiteLocal: 'link-local',
  unspecified: 'unspecified',
  multicast: 'multicast',
  rfc6052: 'ipv4-translated',
  rfc6145: 'ipv4-translated',
  '6to4': 'ipv4-translated',
  teredo: 'ipv4-translated',
};

/** `2000::/3`, the only IPv6 block IANA allocates for global unicast. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

function classifyIpv4(address: ipaddr.IPv4): AddressClass {
  return IPV4_CLASSES[address.range()] ?? 'reserved';
}

/**
 * Classifies an IP address literal for the SSRF guard of signed deliveries
 * (CONTRACT.md "Signed deliveries"). Allowed: public unicast only. Refused:
 * loopback (127/8, ::1), private (RFC 1918), carrier-grade NAT (100.64/10,
 * RFC 6598), unique-local (fc00::/7), link-local (169.254/16 — which holds
 * the cloud metadata address 169.254.169.254 — and fe80::/10), unspecified
 * (0/8, ::), multicast, broadcast, the IANA special-purpose blocks
 * (documentation, benchmarking, 240/4, …), IPv6 outside 2000::/3, and IPv6
 * forms that carry an IPv4 address to translation gateways (NAT64, 6to4,
 * Teredo). IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-compatible (`::a.b.c.d`)
 * IPv6 addresses are judged by their embedded IPv4 address.
 * @param address an IPv4 or IPv6 literal without brackets or zone (`10.0.0.1`, `fe80::1`).
 * @returns the verdict; an unparsable string is `{ allowed: false, class: 'invalid' }`.
 */
export function classifyAddress(address: string): AddressVerdict {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(literal) || literal.includes('%')) return { allowed: false, class: 'invalid' };
  const parsed = ipaddr.parse(literal);
  if (parsed.kind() === 'ipv4') {
    const verdict = classifyIpv4(parsed as ipaddr.IPv4);
    return { allowed: verdict === 'public', class: verdict };
  }
  const v6 = parsed as ipaddr.IPv6;
  const parts = v6.parts;
  const highZero = parts.slice(0, 5).every((part) => part === 0);
  const mapped = highZero && parts[5] === 0xffff;
  const compatible = highZero && parts[5] === 0 && !(parts[6] === 0 && (parts[7] === 0 || parts[7] === 1));
  if (mapped || compatible) {
    const embedded = ipaddr.fromByteArray(v6.toByteArray().slice(12)) as ipaddr.IPv4;
    const verdict = classifyIpv4(embedded);
    return { allowed: verdict === 'public', class: verdict, embeddedIpv4: embedded.toString() };
  }
  const range = v6.range();
  const verdict = IPV6_CLASSES[range] ?? 'reserved';
  if (verdict === 'public' && !v6.match(GLOBAL_UNICAST)) return { allowed: false, class: 'not-global-unicast' };
  return { allowed: verdict === 'public', class: verdict };
}
