import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { isIPv6WithoutZone } from './ip-literals.js';

/**
 * A prefix mesh addresses are allocated from, e.g. `100.64.0.0/10`
 * (Tailscale's share of the RFC 6598 CGNAT range) or an IPv6 ULA prefix.
 * Offsets count from the network address: offset 1 is the first address
 * handed out. Offset 0 (the network address; the subnet-router anycast
 * address in IPv6) and, in IPv4, the broadcast address are never used.
 */
export interface AddressPool {
  /** The prefix in canonical form, e.g. `100.64.0.0/10`. */
  readonly prefix: string;
  readonly family: 'ipv4' | 'ipv6';
  /** Largest usable offset (capped at `Number.MAX_SAFE_INTEGER`). */
  readonly lastOffset: number;
  /** The address at `offset` (1 … {@link lastOffset}), in canonical text form (RFC 5952 for IPv6). */
  addressAt(offset: number): string;
  /** The address as a one-host CIDR for WireGuard's `Address` and `AllowedIPs` (`/32` or `/128`). */
  hostRoute(address: string): string;
}

/** What inet_aton would take as IPv4: one to four dot-separated decimal, octal or `0x` hex numbers. */
const LEGACY_IPV4 = /^(?:0x[0-9a-f]*|\d+)(?:\.(?:0x[0-9a-f]*|\d+)){0,3}$/i;

/** `<address>/<length>`, the length in decimal without leading zeros. */
const CIDR = /^([^/]+)\/(0|[1-9]\d{0,2})$/;

/**
 * Why a prefix cannot be a pool, or `null` when it can. The IPv4 part must
 * be in plain dotted decimal (four parts 0–255, no leading zeros except
 * `0` itself): ipaddr.js, like inet_aton, reads `010.0.0.0` as octal
 * (8.0.0.0), `0x64.0x40.0.0` as hex and `1681915904` as one number, so a
 * prefix that looks private could route public space into the tunnel. An
 * IPv6 prefix must have no zone id.
 */
export function addressPoolProblem(prefix: string): string | null {
  const match = CIDR.exec(prefix);
  if (!match) return 'must be an IPv4 or IPv6 prefix in CIDR form, e.g. 100.64.0.0/10';
  const [, text = ''] = match;
  if (text.includes('%')) return 'must not have a zone id (%…): a mesh prefix is not tied to one interface';
  if (!isIPv4(text) && !isIPv6WithoutZone(text)) {
    return LEGACY_IPV4.test(text)
      ? 'must be an IPv4 prefix in plain dotted decimal (four parts 0–255, no leading zeros, no octal, hex or single-number forms), e.g. 100.64.0.0/10'
      : 'must be an IPv4 or IPv6 prefix in CIDR form, e.g. 100.64.0.0/10';
  }
  let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    parsed = ipaddr.parseCIDR(prefix);
  } catch {
    return 'must be an IPv4 or IPv6 prefix in CIDR form, e.g. 100.64.0.0/10';
  }
  const [address, bits] = parsed;
  const width = address.kind() === 'ipv4' ? 32 : 128;
  const network = address.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(prefix) : ipaddr.IPv6.networkAddressFromCIDR(prefix);
  if (network.toString() !== address.toString()) return `must be a network address: ${network.toString()}/${bits}`;
  if (width - bits < 2) return `must leave at least 2 host bits (at most /${width - 2})`;
  return null;
}

function toBigInt(bytes: readonly number[]): bigint {
  return bytes.reduce((value, byte) => (value << 8n) | BigInt(byte), 0n);
}

function toBytes(value: bigint, length: number): number[] {
  const bytes = new Array<number>(length);
  let rest = value;
  for (let index = length - 1; index >= 0; index -= 1) {
    bytes[index] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return bytes;
}

/**
 * Parses a prefix into an {@link AddressPool}.
 * @throws Error when {@link addressPoolProblem} finds a problem (config validation reports it first).
 */
export function createAddressPool(prefix: string): AddressPool {
  const problem = addressPoolProblem(prefix);
  if (problem) throw new Error(`Mesh prefix "${prefix}" ${problem}.`);
  const [network, bits] = ipaddr.parseCIDR(prefix);
  const family = network.kind() === 'ipv4' ? 'ipv4' : 'ipv6';
  const width = family === 'ipv4' ? 32 : 128;
  const size = 1n << BigInt(width - bits);
  const usable = family === 'ipv4' ? size - 2n : size - 1n;
  const lastOffset = Number(usable > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : usable);
  const base = toBigInt(network.toByteArray());
  const hostBits = family === 'ipv4' ? 32 : 128;
  return {
    prefix: `${network.toString()}/${bits}`,
    family,
    lastOffset,
    addressAt(offset) {
      if (!Number.isSafeInteger(offset) || offset < 1 || offset > lastOffset) {
        throw new RangeError(`Offset ${offset} is outside 1..${lastOffset} of ${prefix}.`);
      }
      return ipaddr.fromByteArray(toBytes(base + BigInt(offset), width / 8)).toString();
    },
    hostRoute(address) {
      return `${address}/${hostBits}`;
    },
  };
}
