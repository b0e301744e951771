import { z } from 'zod';
import { isInZone, plainName } from './dns-names.js';
import type { DnsProvider } from './dns-provider.js';
import { type DnsServerAddress, exchangeDnsMessage, parseDnsServer } from './dns-transport.js';
import { buildSoaQuery, buildTxtUpdate, responseCode, type TxtChange, zoneFromSoaAnswer } from './dns-update-message.js';
import { signTsig, type TsigKey, tsigAlgorithmSchema, verifyTsigResponse } from './tsig.js';

/** Options of {@link createRfc2136DnsProvider} (the `gateway.rfc2136` config section). */
export const rfc2136OptionsSchema = z.object({
  /** Primary DNS server taking updates, `host:port` (port 53 when left out). */
  server: z
    .string()
    .min(1)
    .refine((value) => {
      try {
        parseDnsServer(value);
        return true;
      } catch {
        return false;
      }
    }, 'must be host:port or [v6]:port'),
  /** Zone to update, e.g. `example.com`; found with an SOA query to `server` when left out. */
  zone: z.string().min(1).optional(),
  /** TSIG key name, e.g. `acme-update.`. */
  keyName: z.string().min(1),
  /** TSIG algorithm. */
  keyAlgorithm: tsigAlgorithmSchema.default('hmac-sha256'),
  /** TSIG secret, base64 (as `tsig-keygen` / `keymgr -t` print it). */
  keySecret: z
    .string()
    .min(1)
    .refine((value) => Buffer.from(value, 'base64').length >= 16, 'must be base64 of at least 16 bytes'),
  /** TTL of the challenge records, seconds. */
  ttl: z.number().int().min(1).max(86_400).default(60),
  /** Milliseconds to wait for the server's answer. */
  timeoutMs: z.number().int().min(100).max(60_000).default(5_000),
});
export type Rfc2136Options = z.input<typeof rfc2136OptionsSchema>;

/** Raised when the DNS server refuses an update; `rcode` is its response code (`REFUSED`, `NOTAUTH`, `NOTZONE` …). */
export class DnsUpdateError extends Error {
  override readonly name = 'DnsUpdateError';
  constructor(
    message: string,
    readonly rcode: string,
  ) {
    super(message);
  }
}

/**
 * The built-in {@link DnsProvider}: RFC 2136 dynamic updates signed with
 * TSIG (RFC 8945), as BIND (`update-policy` / `allow-update { key … }`),
 * Knot (`acl: action: update`) and PowerDNS (`ALLOW-DNSUPDATE-FROM`,
 * `TSIG-ALLOW-DNSUPDATE`) accept them. Adds use class IN, removals class
 * NONE (delete one RR), so other TXT values at the name stay. Answers must
 * be signed by the same key. The zone is configured or found by an SOA
 * query to the server.
 * @throws ZodError when the options are invalid (the secret never appears in messages).
 */
export function createRfc2136DnsProvider(options: Rfc2136Options): DnsProvider {
  const parsed = rfc2136OptionsSchema.parse(options);
  const server: DnsServerAddress = parseDnsServer(parsed.server);
  const key: TsigKey = { name: parsed.keyName, algorithm: parsed.keyAlgorithm, secret: Buffer.from(parsed.keySecret, 'base64') };
  const zones = new Map<string, Promise<string>>();

  async function zoneOf(name: string, signal?: AbortSignal): Promise<string> {
    if (parsed.zone !== undefined) {
      if (!isInZone(name, parsed.zone)) throw new Error(`${name} is not in the configured zone ${plainName(parsed.zone)}.`);
      return plainName(parsed.zone);
    }
    const cached = zones.get(name);
    if (cached) return cached;
    const lookup = (async () => {
      const answer = await exchangeDnsMessage({ server, message: buildSoaQuery(name), timeoutMs: parsed.timeoutMs, signal });
      const zone = zoneFromSoaAnswer(answer);
      if (zone === null) {
        throw new Error(`The DNS server ${parsed.server} gave no SOA for ${name} (${responseCode(answer)}); set gateway.rfc2136.zone.`);
      }
      return plainName(zone);
    })();
    zones.set(name, lookup);
    lookup.catch(() => zones.delete(name));
    return lookup;
  }

  async function update(change: TxtChange, signal?: AbortSignal): Promise<void> {
    const zone = await zoneOf(change.name, signal);
    const signed = signTsig({ message: buildTxtUpdate({ zone, changes: [change] }), key });
    const answer = await exchangeDnsMessage({ server, message: signed.message, timeoutMs: parsed.timeoutMs, signal });
    const rcode = responseCode(answer);
    if (rcode !== 'NOERROR') {
      let detail = '';
      try {
        verifyTsigResponse({ response: answer, requestMac: signed.mac, key });
      } catch (error) {
        detail = ` ${(error as Error).message}`;
      }
      throw new DnsUpdateError(
        `The DNS server ${parsed.server} refused the update of ${change.name} in zone ${zone}: ${rcode}.${detail}`,
        rcode,
      );
    }
    verifyTsigResponse({ response: answer, requestMac: signed.mac, key });
  }

  return {
    describe: () => `rfc2136 (${parsed.server}, key ${parsed.keyName}, ${parsed.keyAlgorithm})`,
    addTxt: ({ name, value, signal }) => update({ action: 'add', name: plainName(name), value, ttl: parsed.ttl }, signal),
    removeTxt: ({ name, value, signal }) => update({ action: 'delete', name: plainName(name), value }, signal),
  };
}
