import type { EmailAddress } from 'mailparser';

/** C0 controls (CR and LF included), DEL and the Unicode line and paragraph separators. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this finds.
const LINE_BREAKING = /[\u0000-\u001f\u007f\u2028\u2029]+/g;

/** A display name as one line of a quoted-string: line breaks and other controls become one space, `"` and `\` are escaped. */
function quotedName(name: string): string {
  const line = name.replace(LINE_BREAKING, ' ').trim();
  return `"${line.replace(/["\\]/g, '\\$&')}"`;
}

/**
 * The text of parsed address-header entries (mailparser's `value`: display
 * names decoded, groups nested) as the postbox stores it:
 * `"Name" <local@domain>`, `local@domain`, a group as `"name": members;`,
 * entries joined by `", "`. Unlike mailparser's own `text`, the result reads
 * back (nodemailer's addressparser, {@link bareAddresses}) as exactly the
 * addresses of the header's addr-specs: a mailbox entry without an address
 * (only a display name, e.g. an encoded word that decodes to
 * `ceo@bank.example`) is left out, since its name written alone would read
 * as that address, and a display name's line breaks become spaces, since a
 * stored header's lines are its occurrences.
 */
export function addressListText(entries: readonly EmailAddress[]): string {
  const parts: string[] = [];
  for (const entry of entries) {
    if (entry.group) {
      parts.push(`${quotedName(entry.name)}: ${addressListText(entry.group)};`);
      continue;
    }
    if (!entry.address) continue;
    parts.push(entry.name ? `${quotedName(entry.name)} <${entry.address}>` : entry.address);
  }
  return parts.join(', ');
}
