import { type ParsedMessage, parseMimeMessage } from './mime-message.js';

/** What the worker answers: the parsed message, or why the input is not a readable message. */
export type MimeParseOutcome = { ok: true; message: ParsedMessage } | { ok: false; reason: string };

/**
 * Worker-thread entry of the MIME parser pool (see `createMimeParserPool`):
 * parses one raw message with {@link parseMimeMessage}. mailparser's own
 * refusals (a header block over 1 MiB, more than 1,000 MIME parts) come back
 * as `{ ok: false }`, so that the caller can tell bad mail from a broken pool.
 */
export default async function parseInWorker(raw: Uint8Array): Promise<MimeParseOutcome> {
  try {
    return { ok: true, message: await parseMimeMessage(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)) };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
