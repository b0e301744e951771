import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { canonicalNameWire, plainName } from './dns-names.js';
import { dnsCodecs } from './dns-packet-codecs.js';

/** TSIG algorithms (RFC 8945 §6) by their configuration name, with the HMAC hash and the wire algorithm name. */
const ALGORITHMS = {
  'hmac-sha256': { hash: 'sha256', wireName: 'hmac-sha256' },
  'hmac-sha384': { hash: 'sha384', wireName: 'hmac-sha384' },
  'hmac-sha512': { hash: 'sha512', wireName: 'hmac-sha512' },
  'hmac-sha224': { hash: 'sha224', wireName: 'hmac-sha224' },
  'hmac-sha1': { hash: 'sha1', wireName: 'hmac-sha1' },
  'hmac-md5': { hash: 'md5', wireName: 'hmac-md5.sig-alg.reg.int' },
} as const;

/** Name of a supported TSIG algorithm (`hmac-sha256` is what BIND, Knot and PowerDNS generate by default). */
export const tsigAlgorithmSchema = z.enum(Object.keys(ALGORITHMS) as [keyof typeof ALGORITHMS, ...Array<keyof typeof ALGORITHMS>]);
export type TsigAlgorithm = z.infer<typeof tsigAlgorithmSchema>;

/** A TSIG key as `tsig-keygen` (BIND), `keymgr -t` (Knot) or `pdnsutil generate-tsig-key` print it. */
export interface TsigKey {
  /** Key name, e.g. `acme-update.` (trailing dot optional). */
  name: string;
  algorithm: TsigAlgorithm;
  /** The shared secret (decoded from its base64 form). */
  secret: Buffer;
}

/** TSIG RR type code and the class it is sent in. */
const TYPE_TSIG = 250;
const CLASS_ANY = 255;
/** Seconds of clock difference the server may accept (RFC 8945 §10 recommends 300). */
const FUDGE_SECONDS = 300;
/** TSIG error codes (RFC 8945 §3) by value, for messages. */
const TSIG_ERRORS: Record<number, string> = { 16: 'BADSIG', 17: 'BADKEY', 18: 'BADTIME', 22: 'BADTRUNC' };

/** The TSIG "variables" block (RFC 8945 §4.3.3) that is digested after the message. */
function tsigVariables(key: TsigKey, timeSigned: number, fudge: number, error: number, other: Buffer): Buffer {
  const tail = Buffer.alloc(12);
  writeUint48(tail, timeSigned, 0);
  tail.writeUInt16BE(fudge, 6);
  tail.writeUInt16BE(error, 8);
  tail.writeUInt16BE(other.length, 10);
  const classTtl = Buffer.alloc(6);
  classTtl.writeUInt16BE(CLASS_ANY, 0);
  classTtl.writeUInt32BE(0, 2);
  return Buffer.concat([canonicalNameWire(key.name), classTtl, canonicalNameWire(ALGORITHMS[key.algorithm].wireName), tail, other]);
}

function writeUint48(buffer: Buffer, value: number, offset: number): void {
  buffer.writeUInt16BE(Math.floor(value / 2 ** 32) & 0xffff, offset);
  buffer.writeUInt32BE(value % 2 ** 32, offset + 2);
}

function readUint48(buffer: Buffer, offset: number): number {
  return buffer.readUInt16BE(offset) * 2 ** 32 + buffer.readUInt32BE(offset + 2);
}

function hmac(key: TsigKey, parts: readonly Buffer[]): Buffer {
  const mac = createHmac(ALGORITHMS[key.algorithm].hash, key.secret);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/**
 * Signs a complete DNS message with TSIG (RFC 8945 §5.1): appends the TSIG
 * RR to the additional section and bumps ARCOUNT.
 * @param options.timeSigned seconds since the epoch (default now).
 * @returns the signed message and the MAC, which {@link verifyTsigResponse} needs.
 */
export function signTsig(options: { message: Buffer; key: TsigKey; timeSigned?: number }): { message: Buffer; mac: Buffer } {
  const { message, key } = options;
  const timeSigned = options.timeSigned ?? Math.floor(Date.now() / 1000);
  const mac = hmac(key, [message, tsigVariables(key, timeSigned, FUDGE_SECONDS, 0, Buffer.alloc(0))]);
  const algorithm = canonicalNameWire(ALGORITHMS[key.algorithm].wireName);
  const fixed = Buffer.alloc(10);
  writeUint48(fixed, timeSigned, 0);
  fixed.writeUInt16BE(FUDGE_SECONDS, 6);
  fixed.writeUInt16BE(mac.length, 8);
  const trailer = Buffer.alloc(6);
  trailer.writeUInt16BE(message.readUInt16BE(0), 0);
  trailer.writeUInt16BE(0, 2);
  trailer.writeUInt16BE(0, 4);
  const rdata = Buffer.concat([algorithm, fixed, mac, trailer]);
  const head = Buffer.alloc(10);
  head.writeUInt16BE(TYPE_TSIG, 0);
  head.writeUInt16BE(CLASS_ANY, 2);
  head.writeUInt32BE(0, 4);
  head.writeUInt16BE(rdata.length, 8);
  const signed = Buffer.concat([message, canonicalNameWire(key.name), head, rdata]);
  signed.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return { message: signed, mac };
}

/** Byte offset where the last record of the additional section starts, or -1 when it is empty. */
function lastAdditionalOffset(message: Buffer): number {
  const packet = dnsCodecs();
  const counts = [4, 6, 8, 10].map((offset) => message.readUInt16BE(offset)) as [number, number, number, number];
  let offset = 12;
  for (let i = 0; i < counts[0]; i += 1) {
    packet.question.decode(message, offset);
    offset += packet.question.decode.bytes;
  }
  const records = counts[1] + counts[2] + counts[3];
  let last = -1;
  for (let i = 0; i < records; i += 1) {
    last = offset;
    packet.answer.decode(message, offset);
    offset += packet.answer.decode.bytes;
  }
  return counts[3] > 0 ? last : -1;
}

/**
 * Checks the TSIG of a server's answer to a signed request (RFC 8945 §5.3):
 * the answer must carry a TSIG RR by the same key whose MAC covers the
 * request MAC, the answer without its TSIG, and the TSIG variables, and its
 * time must be within the fudge of now.
 * @throws Error naming the TSIG error (BADKEY, BADSIG, BADTIME) the server
 *   reported, or why the answer's signature is missing or wrong.
 */
export function verifyTsigResponse(options: { response: Buffer; requestMac: Buffer; key: TsigKey; now?: number }): void {
  const { response, key } = options;
  const packet = dnsCodecs();
  const start = lastAdditionalOffset(response);
  if (start < 0) throw new Error('The DNS server answered without a TSIG signature.');
  const record = packet.answer.decode(response, start);
  if (record.type !== 'TSIG') throw new Error('The DNS server answered without a TSIG signature.');
  if (plainName(record.name) !== plainName(key.name))
    throw new Error(`The DNS server signed its answer with another key (${record.name}).`);
  const rdata = record.data as Buffer;
  const algorithmName = packet.name.decode(rdata, 0);
  let offset = packet.name.decode.bytes;
  if (plainName(algorithmName) !== plainName(ALGORITHMS[key.algorithm].wireName)) {
    throw new Error(`The DNS server signed its answer with another algorithm (${algorithmName}).`);
  }
  const timeSigned = readUint48(rdata, offset);
  const fudge = rdata.readUInt16BE(offset + 6);
  const macSize = rdata.readUInt16BE(offset + 8);
  offset += 10;
  const mac = rdata.subarray(offset, offset + macSize);
  offset += macSize;
  const originalId = rdata.readUInt16BE(offset);
  const error = rdata.readUInt16BE(offset + 2);
  const otherLength = rdata.readUInt16BE(offset + 4);
  const other = rdata.subarray(offset + 6, offset + 6 + otherLength);
  if (error !== 0) {
    throw new Error(`The DNS server refused the TSIG signature: ${TSIG_ERRORS[error] ?? `TSIG error ${error}`}.`);
  }
  const unsigned = Buffer.from(response.subarray(0, start));
  unsigned.writeUInt16BE(originalId, 0);
  unsigned.writeUInt16BE(response.readUInt16BE(10) - 1, 10);
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(options.requestMac.length, 0);
  const expected = hmac(key, [prefix, options.requestMac, unsigned, tsigVariables(key, timeSigned, fudge, error, other)]);
  if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) {
    throw new Error('The TSIG signature of the DNS server’s answer does not verify (wrong key secret?).');
  }
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timeSigned) > fudge) throw new Error('The DNS server’s answer is signed at a time outside the TSIG fudge.');
}
