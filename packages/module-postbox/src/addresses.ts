import addressparser from 'nodemailer/lib/addressparser';

/** RFC 5321 §4.5.3.1.1: a local part is at most 64 octets. */
export const MAX_LOCAL_PART_OCTETS = 64;
/** RFC 5321 §4.5.3.1.2: a domain is at most 255 octets. */
const MAX_DOMAIN_OCTETS = 255;

/** RFC 5321 §4.1.2 `Dot-string`: `Atom *("." Atom)`, `Atom` = 1*`atext` (RFC 5322 §3.2.3). */
const DOT_STRING = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
/** RFC 5321 §4.1.2 `Domain` (LDH labels) or an address literal in brackets. */
const DOMAIN = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[^\]\s]{1,64}\])$/;

/**
 * Why `localPart` cannot be allocated, or `null` when it is a valid RFC 5321
 * `Dot-string` of at most 64 octets. The `Quoted-string` form is refused:
 * RFC 5321 §4.1.2 says hosts SHOULD avoid mailboxes that need it.
 */
export function localPartProblem(localPart: string): string | null {
  if (localPart.length === 0) return 'must not be empty';
  if (Buffer.byteLength(localPart, 'utf8') > MAX_LOCAL_PART_OCTETS)
    return `must be at most ${MAX_LOCAL_PART_OCTETS} octets (RFC 5321 §4.5.3.1.1)`;
  if (localPart.startsWith('"')) return 'quoted local parts are not allocated (RFC 5321 §4.1.2 advises against them)';
  if (!DOT_STRING.test(localPart)) {
    return "must be an RFC 5321 Dot-string: letters, digits and !#$%&'*+-/=?^_`{|}~ in dot-separated atoms, no leading, trailing or double dot";
  }
  return null;
}

/**
 * Mailboxes are compared case-insensitively (RFC 5321 §2.4 lets a server
 * treat local parts so and advises it), so addresses are stored lower-cased.
 */
export function normalizeAddress(address: string): string {
  return address.trim().toLowerCase();
}

/** Whether `address` is `local@domain` with an RFC 5321 local part (dot-string or quoted) and domain. */
export function isMailboxAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return false;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (Buffer.byteLength(local, 'utf8') > MAX_LOCAL_PART_OCTETS || domain.length > MAX_DOMAIN_OCTETS) return false;
  const quoted = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/.test(local);
  return (quoted || DOT_STRING.test(local)) && DOMAIN.test(domain);
}

/** One mailbox of an address header: display name (may be empty) and address. */
export interface Mailbox {
  name: string;
  address: string;
}

/**
 * Parses an RFC 5322 address list (`a@x.test, "B" <b@y.test>`), groups
 * flattened, with nodemailer's addressparser.
 * @returns the mailboxes, or `null` when an entry is not a valid address.
 */
export function parseMailboxes(value: string): Mailbox[] | null {
  const parsed = addressparser(value, { flatten: true });
  const mailboxes: Mailbox[] = [];
  for (const entry of parsed) {
    if (!isMailboxAddress(entry.address)) return null;
    mailboxes.push({ name: entry.name, address: entry.address });
  }
  return mailboxes;
}

/**
 * Whether a mailbox's display name is nothing but addresses, one of them not
 * its own: `carol@x.test dave@y.test` (a space where a comma belongs) parses
 * as one mailbox `"dave@y.test" <carol@x.test>`, and a message sent to it
 * would reach carol only. Names with other words stay accepted, as mail
 * clients and lists write them (`"'jane@gmail.com' via golang-nuts"
 * <golang-nuts@googlegroups.com>`, `"Jane (jane@old.test)" <jane@new.test>`),
 * and so does a name that is the mailbox's own address.
 */
export function namesAnotherAddress(mailbox: Mailbox): boolean {
  const own = normalizeAddress(mailbox.address);
  const tokens = mailbox.name
    .split(/[\s,;]+/)
    .map((token) => token.replace(/^["'<(]+|["'>)]+$/g, ''))
    .filter((token) => token !== '');
  return tokens.length > 0 && tokens.every((token) => isMailboxAddress(token)) && tokens.some((token) => normalizeAddress(token) !== own);
}

/** The bare address of a `From`-style value (`"Shop" <news@shop.test>` → `news@shop.test`), or the trimmed value when it has none. */
export function bareAddress(value: string): string {
  const mailboxes = parseMailboxes(value);
  return normalizeAddress(mailboxes?.[0]?.address ?? value);
}

/**
 * The sender address that rules (`from_like`) and de-duplication read from a
 * `From`-style value: the address of its first entry (groups flattened) that
 * is a valid mailbox, lower-cased; `''` when it has none. Only ever an
 * addr-spec: display names, comments and entries that are no address are
 * never read as the sender (`"ceo@bank.example" <x@evil.example>, <a..b@x>`
 * is `x@evil.example`).
 */
export function senderAddress(value: string): string {
  for (const entry of addressparser(value, { flatten: true })) {
    if (isMailboxAddress(entry.address)) return normalizeAddress(entry.address);
  }
  return '';
}
