import addressparser from 'nodemailer/lib/addressparser';
import { isMailboxAddress, normalizeAddress } from './addresses.js';

/**
 * The addresses of an address header or field (`From`, `To`, `Cc`,
 * `Return-Path`; several lines, lists and groups) without anything else a
 * sender wrote: no display names, comments or group names, and no entry
 * that is not a valid `local@domain` with a dot-string local part (a quoted
 * local part can hold spaces, that is free text). Lower-cased, joined by
 * `", "`; empty when no entry qualifies.
 */
export function bareAddresses(value: string): string {
  const addresses = headerAddresses(value)
    .map((address) => normalizeAddress(address))
    .filter((address) => !address.startsWith('"') && isMailboxAddress(address));
  return [...new Set(addresses)].join(', ');
}

/**
 * Every address of an address header's stored text (several lines, lists
 * and groups flattened, with nodemailer's addressparser), as written: quoted
 * local parts and entries that are no valid address included, names and
 * comments left out.
 */
export function headerAddresses(value: string): string[] {
  return value
    .split('\n')
    .flatMap((line) => addressparser(line, { flatten: true }))
    .map((entry) => entry.address);
}
