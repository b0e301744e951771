/** The raw `From` and `Sender` fields of a message's header (RFC 5322 §3.6.2), in order. */
export interface OriginatorLines {
  from: string[];
  sender: string[];
  /**
   * Whether the header block holds a CR not followed by LF (RFC 5322 §2.2
   * allows CR only in CRLF). Such a CR ends no line here, as in mailparser,
   * but ends one for other readers of the raw message (Python's `email`
   * package, some mail clients): to them `Subject: x\rFrom: bob@…` is a
   * `From` field, and what `from` and `sender` list is not what they see.
   */
  bareCr: boolean;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Every `From` and every `Sender` field of the top-level header of `raw`, and
 * whether that header has a bare CR. The fields are
 * raw lines (`Name: value`, folded lines joined by CRLF, one character per
 * byte as mailparser hands header lines over). The header block is read as
 * mailparser's splitter reads it: lines end at LF, the block at the first
 * empty line; a line beginning with a space or tab continues the field
 * before it; a field's name is what precedes its first colon, trimmed, in
 * any case (`FROM :` is `From`). Unlike mailparser, the first line is a
 * field like any other: mailparser drops a first line beginning with
 * `From ` as an mbox separator, so `From : bob@…` there is a `From` field it
 * never reads (and the message's stored `from` is another one or empty),
 * while a mail client reading the raw message may show it as the sender.
 * A CR is a line's end only right before its LF; any other CR in the block
 * (`bareCr`) is part of the line, as mailparser reads it.
 * Linear in the header block's size.
 */
export function originatorLines(raw: Buffer): OriginatorLines {
  const found: OriginatorLines = { from: [], sender: [], bareCr: false };
  let field: string | null = null;
  const close = () => {
    if (field === null) return;
    const colon = field.indexOf(':');
    const name = colon < 0 ? '' : field.slice(0, colon).trim().toLowerCase();
    if (name === 'from' || name === 'sender') found[name].push(field);
  };
  let start = 0;
  while (start < raw.length) {
    const newline = raw.indexOf(LF, start);
    const stop = newline === -1 ? raw.length : newline;
    const end = stop > start && raw[stop - 1] === CR ? stop - 1 : stop;
    // The empty line that ends the header block.
    if (newline !== -1 && end === start) break;
    // Without a final LF, a last CR is followed by none.
    found.bareCr ||= raw.subarray(start, newline === -1 ? stop : end).includes(CR);
    const line = raw.toString('latin1', start, end);
    start = stop + 1;
    if (field !== null && (line.startsWith(' ') || line.startsWith('\t'))) {
      field += `\r\n${line}`;
      continue;
    }
    close();
    field = line;
  }
  close();
  return found;
}
