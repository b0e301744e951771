import { createRequire } from 'node:module';
import type dnsPacket from 'dns-packet';

/** A dns-packet decoder: the value, and the bytes it read in `.bytes`. */
interface Decoder<T> {
  (buffer: Buffer, offset?: number): T;
  bytes: number;
}

/** A dns-packet encoder: the encoded value, and its length in `.bytes`. */
interface Encoder<T> {
  (value: T, buffer?: Buffer, offset?: number): Buffer;
  bytes: number;
}

/** A decoded resource record; `data` is a Buffer for types dns-packet does not parse (such as TSIG). */
export interface DecodedRecord {
  name: string;
  type: string;
  class: string;
  ttl: number;
  data: unknown;
}

/**
 * The parts of dns-packet this module uses, typed: its public per-part
 * codecs (names, questions, records, TXT data), which
 * `@types/dns-packet` leaves out.
 */
export interface DnsPacketCodecs {
  name: { encode: Encoder<string>; decode: Decoder<string> };
  question: { decode: Decoder<{ name: string; type: string }> };
  answer: { decode: Decoder<DecodedRecord> };
  txt: { encode: Encoder<Buffer[]> };
  encode: typeof dnsPacket.encode;
  decode(buffer: Buffer): { answers?: DecodedRecord[]; authorities?: DecodedRecord[] };
}

let codecs: DnsPacketCodecs | undefined;

/**
 * dns-packet with the typed codecs of {@link DnsPacketCodecs}, loaded on
 * the first call. Every `agentinfra` CLI command imports this package for
 * its migrations and config schema only, which must not load dns-packet
 * (only DNS-01 through RFC 2136 uses it); its callers (TSIG signing, message
 * building and parsing) are synchronous, so the CommonJS package is
 * required, not imported.
 */
export function dnsCodecs(): DnsPacketCodecs {
  codecs ??= createRequire(import.meta.url)('dns-packet') as DnsPacketCodecs;
  return codecs;
}
