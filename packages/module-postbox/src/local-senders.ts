import { domainToASCII } from 'node:url';
import type { Knex } from 'knex';
import { normalizeAddress } from './addresses.js';
import { headerAddresses } from './bare-addresses.js';
import type { PostmasterRoute } from './postmaster.js';

/**
 * Mail over the bundled MTA that claims to come from this postbox (any
 * address at the mail domain, or one an agent holds) in its envelope
 * `MAIL FROM` or its `From`/`Sender` header. Such mail is refused: the
 * bundled MTA takes mail from anyone without authentication, and mail /send
 * delivers to local recipients never crosses it (their copies are stored
 * directly; the relay gets only the others), so an SMTP client naming a
 * local sender is forging it.
 */
export class LocalSenderError extends Error {
  override readonly name = 'LocalSenderError';
  constructor(
    /** Where the address was found: `MAIL FROM`, `From` or `Sender`. */
    readonly field: 'MAIL FROM' | 'From' | 'Sender',
    /** The local address it names (bare, lower-case). */
    readonly address: string,
  ) {
    super(`${field} <${address}> is an address of this server; mail from it is not accepted over SMTP`);
  }
}

/**
 * A header whose originator fields the bundled MTA refuses whole, answered
 * `550 5.6.0` (RFC 3463: the message is not one RFC 5322 allows, or not one
 * this server reads the same way as other readers of the raw message).
 */
export class OriginatorFormError extends Error {}

/** Mailboxes a `From` or `Sender` field may list at most (every one is looked up as a possible local sender). */
export const MAX_ORIGINATOR_MAILBOXES = 100;

/**
 * Mail over the bundled MTA whose header has more than one `From` field or
 * more than one `Sender` field: RFC 5322 §3.6 allows exactly one `From` and
 * at most one `Sender`. Refused whole rather than checked field by field:
 * the postbox shows the first `From`, and what a mail client reading the raw
 * message shows is anyone's guess (a second `From` naming an agent of this
 * server passed the local-sender check when only the first was read).
 */
export class RepeatedOriginatorError extends OriginatorFormError {
  override readonly name = 'RepeatedOriginatorError';
  constructor(
    /** The field that is repeated. */
    readonly field: 'From' | 'Sender',
    /** How many times it occurs (2 or more). */
    readonly count: number,
  ) {
    super(
      `Message has ${count} ${field} header fields; ${field === 'From' ? 'exactly one is' : 'at most one is'} allowed (RFC 5322 section 3.6)`,
    );
  }
}

/**
 * Mail over the bundled MTA whose header holds a bare CR (a CR not followed
 * by LF), which RFC 5322 §2.2 allows only in CRLF. Refused whole: the
 * postbox, like mailparser, ends header lines at LF only, while other
 * readers of the raw message (Python's `email` package, some mail clients)
 * end one at a bare CR too, so `Subject: x\rFrom: bob@…` passed the checks
 * as a subject and reached them as a `From` of this server.
 */
export class BareCrHeaderError extends OriginatorFormError {
  override readonly name = 'BareCrHeaderError';
  constructor() {
    super('Message header has a bare CR (a CR not followed by LF); RFC 5322 section 2.2 allows CR only in CRLF');
  }
}

/**
 * Mail over the bundled MTA whose `From` or `Sender` field lists more than
 * {@link MAX_ORIGINATOR_MAILBOXES} mailboxes (a `Sender` may name one, RFC
 * 5322 §3.6.2; a `From` of a hundred authors is already far past real mail):
 * every mailbox is looked up as a possible local sender, so an
 * unauthenticated client could otherwise make each message cost hundreds of
 * queries.
 */
export class CrowdedOriginatorError extends OriginatorFormError {
  override readonly name = 'CrowdedOriginatorError';
  constructor(
    readonly field: 'From' | 'Sender',
    /** How many mailboxes it lists. */
    readonly count: number,
  ) {
    super(`Message ${field} field lists ${count} mailboxes; at most ${MAX_ORIGINATOR_MAILBOXES} are accepted`);
  }
}

/** Dot-atom text: what a quoted local part may hold and still be the same mailbox unquoted. */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/**
 * The form in which `address` is compared with the stored addresses: lower-cased
 * (as the postbox stores them, {@link normalizeAddress}), a quoted local part that
 * needs no quotes unquoted (`"bob"@x` is `bob@x`, RFC 5321 §4.1.2), and the
 * domain without a trailing dot (`x.test.` is `x.test`) and in its ASCII form
 * (UTS #46, as `node:url`'s `domainToASCII`: `bücher.example` is
 * `xn--bcher-kva.example`, full-width letters are the plain ones); a domain
 * that has no ASCII form (a domain literal `[…]`) is kept as written.
 */
export function comparableAddress(address: string): string {
  const normalized = normalizeAddress(address);
  const at = normalized.lastIndexOf('@');
  if (at <= 0) return normalized;
  let local = normalized.slice(0, at);
  const written = normalized.slice(at + 1).replace(/\.$/, '');
  const domain = domainToASCII(written) || written;
  const unquoted = /^"(.*)"$/.exec(local)?.[1]?.replace(/\\(.)/g, '$1');
  if (unquoted !== undefined && DOT_ATOM.test(unquoted)) local = unquoted;
  return `${local}@${domain}`;
}

/** Which sender addresses belong to this postbox. */
export interface LocalSenders {
  /**
   * The first of `addresses` (any form, {@link comparableAddress}) that is this
   * server's: any address at the mail domain (the postbox is its only MTA and
   * refuses every recipient there that no agent holds, so no one else sends as
   * it), `postmaster` without a domain, or one an agent holds
   * (`postbox_addresses`, whatever its domain); `null` when none is.
   * Empty strings (a null reverse-path `MAIL FROM:<>`) are never local.
   */
  firstLocal(addresses: readonly string[]): Promise<string | null>;
  /**
   * Throws when the header has a bare CR, more than one `From` or `Sender` field, or when the
   * envelope sender or an address of a `From` or `Sender` field is local.
   * @param sender.from the text of each `From` field (`"Name" <a@b>, …`, as the parsed message's `originators`); `sender.sender` likewise;
   *   `sender.bareCr` whether the header has a CR not followed by LF (then other readers may find other fields).
   * @throws BareCrHeaderError when `bareCr` (checked first); RepeatedOriginatorError when `from` or `sender` has more than one
   *   field (`From` before `Sender`); CrowdedOriginatorError when one lists more than {@link MAX_ORIGINATOR_MAILBOXES}
   *   mailboxes; LocalSenderError naming the first local address found, envelope first.
   */
  check(sender: { envelopeFrom: string | null; from: readonly string[]; sender: readonly string[]; bareCr: boolean }): Promise<void>;
}

/**
 * @param options.knex the database; @param options.mailDomain the served domain (lower-case): every address at it is local;
 * @param options.postmaster the postmaster route (`postmaster` without a domain is its canonical address, so local).
 */
export function createLocalSenders(options: { knex: () => Knex; mailDomain: string; postmaster: PostmasterRoute }): LocalSenders {
  const domainSuffix = `@${options.mailDomain}`;
  async function firstLocal(addresses: readonly string[]): Promise<string | null> {
    const candidates = [
      ...new Set(
        addresses.filter((address) => address.trim() !== '').map((address) => options.postmaster.canonical(comparableAddress(address))),
      ),
    ];
    if (candidates.length === 0) return null;
    const atDomain = candidates.find((address) => address.endsWith(domainSuffix));
    if (atDomain !== undefined) return atDomain;
    const rows = (await options.knex()('postbox_addresses').whereIn('address', candidates).select('address')) as Array<{ address: string }>;
    const held = new Set(rows.map((row) => row.address));
    return candidates.find((address) => held.has(address)) ?? null;
  }
  return {
    firstLocal,
    async check(sender) {
      if (sender.bareCr) throw new BareCrHeaderError();
      for (const [field, texts] of [
        ['From', sender.from],
        ['Sender', sender.sender],
      ] as const) {
        if (texts.length > 1) throw new RepeatedOriginatorError(field, texts.length);
      }
      const fields = [
        ['MAIL FROM', sender.envelopeFrom === null ? [] : [sender.envelopeFrom]],
        ['From', sender.from.flatMap(headerAddresses)],
        ['Sender', sender.sender.flatMap(headerAddresses)],
      ] as const;
      for (const [field, addresses] of fields) {
        if (field !== 'MAIL FROM' && addresses.length > MAX_ORIGINATOR_MAILBOXES) throw new CrowdedOriginatorError(field, addresses.length);
      }
      for (const [field, addresses] of fields) {
        const local = await firstLocal(addresses);
        if (local !== null) throw new LocalSenderError(field, local);
      }
    },
  };
}
