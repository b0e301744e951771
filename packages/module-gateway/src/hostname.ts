import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { toASCII } from 'tr46';
import { z } from 'zod';

/** Prefix of the TXT record that proves control of a host (like ACME's `_acme-challenge`). */
export const CLAIM_RECORD_PREFIX = '_agentinfra-challenge';
/** Longest DNS name in octets (RFC 1035 §2.3.4, 255 on the wire minus length bytes and root). */
const MAX_DNS_NAME_OCTETS = 253;
/** Longest hostname in octets: its claim record `<CLAIM_RECORD_PREFIX>.<host>` must still be a valid DNS name (231). */
export const MAX_HOSTNAME_OCTETS = MAX_DNS_NAME_OCTETS - `${CLAIM_RECORD_PREFIX}.`.length;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const NOT_AN_IP = 'An IP address is not a hostname.';
/**
 * UTS #46 with the checks a CA applies to internationalised names (IDNA2008):
 * RFC 5893's Bidi rule, RFC 5891's hyphen rules on the Unicode form of every
 * label (also of one given as `xn--…`), joiners in context, STD3 characters.
 */
const IDNA2008_CHECKS = {
  checkBidi: true,
  checkHyphens: true,
  checkJoiners: true,
  useSTD3ASCIIRules: true,
  verifyDNSLength: true,
  processingOption: 'nontransitional',
} as const;
const ALL_DIGIT_TLD = 'The top-level label of the hostname must not be all digits.';
/** Characters a URL parser treats as the end of the host or as userinfo, port or escape: `domainToASCII` would cut at or decode them. */
const URL_DELIMITER = /[/?#\\@:%]/u;
/** Control characters, and the invisible code points that IDNA mapping silently removes (soft hyphen, zero-width space, variation selectors…). */
const DROPPED_BY_IDNA = /[\p{Cc}\p{Default_Ignorable_Code_Point}]/u;

/** Writes a code point as `U+XXXX` so that an invisible character can be named in a message. */
function codePoint(char: string): string {
  return `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The reason to refuse `input` before IDNA conversion, or null: a URL
 * delimiter or a character `domainToASCII` would drop, so that
 * `victim.example.com/path` is refused instead of becoming `victim.example.com`.
 */
function urlJunkReason(input: string): string | null {
  const delimiter = URL_DELIMITER.exec(input)?.[0];
  if (delimiter !== undefined) {
    return `The hostname contains "${delimiter}"; a hostname has no path, query, fragment, port, user or percent-escape.`;
  }
  const dropped = DROPPED_BY_IDNA.exec(input)?.[0];
  if (dropped !== undefined) {
    return `The hostname contains the invisible or control character ${codePoint(dropped)}, which IDNA conversion would drop.`;
  }
  return null;
}

/** Outcome of {@link normalizeHostname}. */
export type HostnameCheck = { ok: true; host: string } | { ok: false; reason: string };

/**
 * Validates a hostname an agent wants bound, and returns its ASCII form:
 * Unicode names are converted with IDNA (UTS #46, WHATWG `domainToASCII`)
 * to punycode and lowercased; the result must have at least two labels of
 * RFC 1123 letters, digits and hyphens (1–63 octets, no hyphen first or
 * last, hyphens in positions 3–4 only in `xn--` labels), at most
 * {@link MAX_HOSTNAME_OCTETS} octets, a top-level label that is not all
 * digits, no wildcard, no IP literal and no trailing dot. Characters that
 * conversion would cut at or silently drop (`/ ? # \\ @ : %`, control and
 * default-ignorable code points) are refused first, so the bound name is
 * never a truncation of the input. Names a CA would refuse under IDNA2008
 * (see {@link IDNA2008_CHECKS}: `aא.example`, `xn----7sb.example`) are
 * refused too. A refusal's `reason` is a sentence.
 */
export function normalizeHostname(input: string): HostnameCheck {
  if (input.length === 0) return { ok: false, reason: 'The hostname is empty.' };
  if (/\s/u.test(input)) return { ok: false, reason: 'The hostname contains whitespace.' };
  if (input.includes('*')) return { ok: false, reason: 'The hostname contains a wildcard (*); wildcards are not allowed.' };
  if (input.endsWith('.') || input.endsWith('。')) return { ok: false, reason: 'The hostname must not end with a dot.' };
  if (isIP(input) !== 0 || input.startsWith('[')) return { ok: false, reason: NOT_AN_IP };
  const junk = urlJunkReason(input);
  if (junk !== null) return { ok: false, reason: junk };
  if (/^[0-9]+$/.test(input.slice(input.lastIndexOf('.') + 1))) return { ok: false, reason: ALL_DIGIT_TLD };
  const ascii = domainToASCII(input);
  if (ascii === '') return { ok: false, reason: 'The hostname is not a valid internationalised domain name.' };
  if (isIP(ascii) !== 0) return { ok: false, reason: NOT_AN_IP };
  if (ascii.length > MAX_HOSTNAME_OCTETS) {
    return {
      ok: false,
      reason: `The hostname is longer than ${MAX_HOSTNAME_OCTETS} octets, so its claim record ${CLAIM_RECORD_PREFIX}.<host> would exceed the ${MAX_DNS_NAME_OCTETS}-octet limit of DNS names.`,
    };
  }
  const labels = ascii.split('.');
  if (labels.length < 2) return { ok: false, reason: 'The hostname must have at least two labels (e.g. app.example.com).' };
  for (const label of labels) {
    if (label.length === 0) return { ok: false, reason: 'The hostname has an empty label.' };
    if (label.length > 63) return { ok: false, reason: `The label "${label.slice(0, 16)}…" is longer than 63 octets.` };
    if (!LABEL.test(label)) return { ok: false, reason: `The label "${label}" must be letters, digits and inner hyphens.` };
    if (label.slice(2, 4) === '--' && !label.startsWith('xn--'))
      return { ok: false, reason: `The label "${label}" has hyphens in positions 3 and 4, which only xn-- labels may have.` };
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1] as string)) return { ok: false, reason: ALL_DIGIT_TLD };
  if (toASCII(input, IDNA2008_CHECKS) === null) {
    return {
      ok: false,
      reason:
        'The hostname breaks the IDNA2008 rules a CA checks (RFC 5891, RFC 5893): a label, also in its Unicode form, may not start or end with a hyphen, nor mix left-to-right and right-to-left characters.',
    };
  }
  return { ok: true, host: ascii };
}

/** Zod schema of a hostname field: validates with {@link normalizeHostname} and outputs the ASCII form. */
export const hostnameSchema = z
  .string()
  .max(1024)
  .transform((value, ctx) => {
    const checked = normalizeHostname(value);
    if (checked.ok) return checked.host;
    ctx.addIssue({ code: 'custom', message: checked.reason });
    return z.NEVER;
  });
