import type { Knex } from 'knex';
import { normalizeAddress } from './addresses.js';
import { headerAddresses } from './bare-addresses.js';
import type { PostmasterRoute } from './postmaster.js';

/**
 * Mail over the bundled MTA that claims to come from this postbox (an
 * agent's address or the postmaster's) in its envelope `MAIL FROM` or its
 * `From`/`Sender` header. Such mail is refused: the bundled MTA takes mail
 * from anyone without authentication, and mail /send delivers to local
 * recipients never crosses it (their copies are stored directly; the relay
 * gets only the others), so an SMTP client naming a local sender is forging it.
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

/** Dot-atom text: what a quoted local part may hold and still be the same mailbox unquoted. */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/**
 * The form in which `address` is compared with the stored addresses: lower-cased
 * (as the postbox stores them, {@link normalizeAddress}), a quoted local part that
 * needs no quotes unquoted (`"bob"@x` is `bob@x`, RFC 5321 §4.1.2), and the
 * domain without a trailing dot (`x.test.` is `x.test`).
 */
export function comparableAddress(address: string): string {
  const normalized = normalizeAddress(address);
  const at = normalized.lastIndexOf('@');
  if (at <= 0) return normalized;
  let local = normalized.slice(0, at);
  const domain = normalized.slice(at + 1).replace(/\.$/, '');
  const unquoted = /^"(.*)"$/.exec(local)?.[1]?.replace(/\\(.)/g, '$1');
  if (unquoted !== undefined && DOT_ATOM.test(unquoted)) local = unquoted;
  return `${local}@${domain}`;
}

/** Which sender addresses belong to this postbox. */
export interface LocalSenders {
  /**
   * The first of `addresses` (any form, {@link comparableAddress}) that an agent holds
   * (`postbox_addresses`) or that is `postmaster@<mail domain>`, or `null` when none is.
   * Empty strings (a null reverse-path `MAIL FROM:<>`) are never local.
   */
  firstLocal(addresses: readonly string[]): Promise<string | null>;
  /**
   * Throws when the envelope sender or an address of the `From` or `Sender` header
   * (stored text, `"Name" <a@b>, …`) is local.
   * @throws LocalSenderError naming the first local address found, envelope first.
   */
  check(sender: { envelopeFrom: string | null; from: string; sender: string | undefined }): Promise<void>;
}

/** @param options.knex the database; @param options.postmaster the postmaster route (its canonical address counts as local). */
export function createLocalSenders(options: { knex: () => Knex; postmaster: PostmasterRoute }): LocalSenders {
  const postmasterAddress = options.postmaster.canonical('postmaster');
  async function firstLocal(addresses: readonly string[]): Promise<string | null> {
    const candidates = [...new Set(addresses.filter((address) => address.trim() !== '').map(comparableAddress))];
    if (candidates.length === 0) return null;
    const postmaster = candidates.find((address) => options.postmaster.canonical(address) === postmasterAddress);
    if (postmaster !== undefined) return postmasterAddress;
    const rows = (await options.knex()('postbox_addresses').whereIn('address', candidates).select('address')) as Array<{ address: string }>;
    const held = new Set(rows.map((row) => row.address));
    return candidates.find((address) => held.has(address)) ?? null;
  }
  return {
    firstLocal,
    async check(sender) {
      const fields = [
        ['MAIL FROM', sender.envelopeFrom === null ? [] : [sender.envelopeFrom]],
        ['From', headerAddresses(sender.from)],
        ['Sender', headerAddresses(sender.sender ?? '')],
      ] as const;
      for (const [field, addresses] of fields) {
        const local = await firstLocal(addresses);
        if (local !== null) throw new LocalSenderError(field, local);
      }
    },
  };
}
