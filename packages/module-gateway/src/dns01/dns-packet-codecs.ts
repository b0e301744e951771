import dnsPacket from 'dns-packet';

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

/** dns-packet with the typed codecs of {@link DnsPacketCodecs}. */
export const dnsCodecs = dnsPacket as unknown as DnsPacketCodecs;
