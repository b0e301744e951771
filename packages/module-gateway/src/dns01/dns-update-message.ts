import { randomInt } from 'node:crypto';
import { canonicalNameWire } from './dns-names.js';
import { dnsCodecs } from './dns-packet-codecs.js';

/** Opcode UPDATE (RFC 2136 §2.2) in the header's flag bits. */
const OPCODE_UPDATE = 5 << 11;
const TYPE_TXT = 16;
const TYPE_SOA = 6;
const CLASS_IN = 1;
/** RFC 2136 §2.5.4: class NONE deletes one RR from an RRset. */
const CLASS_NONE = 254;

/** One change in the update section. */
export type TxtChange = { action: 'add'; name: string; value: string; ttl: number } | { action: 'delete'; name: string; value: string };

/** TXT character-strings of at most 255 bytes each (RFC 1035 §3.3.14), so long values survive. */
export function txtStrings(value: string): Buffer[] {
  const bytes = Buffer.from(value, 'utf8');
  const strings: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += 255) strings.push(bytes.subarray(offset, offset + 255));
  return strings.length > 0 ? strings : [Buffer.alloc(0)];
}

function resourceRecord(change: TxtChange): Buffer {
  const fixed = Buffer.alloc(8);
  fixed.writeUInt16BE(TYPE_TXT, 0);
  fixed.writeUInt16BE(change.action === 'add' ? CLASS_IN : CLASS_NONE, 2);
  fixed.writeUInt32BE(change.action === 'add' ? change.ttl : 0, 4);
  return Buffer.concat([canonicalNameWire(change.name), fixed, Buffer.from(dnsCodecs().txt.encode(txtStrings(change.value)))]);
}

/**
 * An RFC 2136 UPDATE message for `zone` with TXT additions and deletions
 * (no prerequisites). A random 16-bit id.
 */
export function buildTxtUpdate(options: { zone: string; changes: readonly TxtChange[] }): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(randomInt(0, 65_536), 0);
  header.writeUInt16BE(OPCODE_UPDATE, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(0, 6);
  header.writeUInt16BE(options.changes.length, 8);
  header.writeUInt16BE(0, 10);
  const zoneTypeClass = Buffer.alloc(4);
  zoneTypeClass.writeUInt16BE(TYPE_SOA, 0);
  zoneTypeClass.writeUInt16BE(CLASS_IN, 2);
  return Buffer.concat([header, canonicalNameWire(options.zone), zoneTypeClass, ...options.changes.map(resourceRecord)]);
}

/** A plain SOA query for `name` (no recursion wanted), to find the zone that holds it. */
export function buildSoaQuery(name: string): Buffer {
  return Buffer.from(
    dnsCodecs().encode({ type: 'query', id: randomInt(0, 65_536), flags: 0, questions: [{ name, type: 'SOA', class: 'IN' }] }),
  );
}

/** Response codes of RFC 1035 §4.1.1 and RFC 2136 §2.2 by value. */
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'];

/** Response code of a DNS message (`NOERROR`, `NOTAUTH`, `REFUSED` …). */
export function responseCode(message: Buffer): string {
  const code = message.readUInt16BE(2) & 0xf;
  return RCODES[code] ?? `RCODE${code}`;
}

/**
 * The zone apex named by an authoritative answer to {@link buildSoaQuery}:
 * the owner of the SOA record in the answer or authority section.
 * @returns `null` when the answer holds no SOA record.
 */
export function zoneFromSoaAnswer(message: Buffer): string | null {
  const decoded = dnsCodecs().decode(message);
  const soa = [...(decoded.answers ?? []), ...(decoded.authorities ?? [])].find((record) => record.type === 'SOA');
  return soa ? soa.name : null;
}
