import { dnsCodecs } from './dns-packet-codecs.js';

/**
 * A domain name in canonical wire form (RFC 4034 §6.2: uncompressed,
 * lowercase labels, ending with the root label), as TSIG digests it.
 * `name` may end with a dot.
 */
export function canonicalNameWire(name: string): Buffer {
  return Buffer.from(dnsCodecs().name.encode(name.toLowerCase()));
}

/** `name` lowercased without a trailing dot (`Example.COM.` → `example.com`). */
export function plainName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** Whether `name` is `zone` or below it (both plain or dotted; case-insensitive). */
export function isInZone(name: string, zone: string): boolean {
  const n = plainName(name);
  const z = plainName(zone);
  return z === '' || n === z || n.endsWith(`.${z}`);
}
