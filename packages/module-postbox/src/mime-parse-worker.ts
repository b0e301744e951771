import { createHash } from 'node:crypto';
import { lowerBackgroundThreadPriority } from '@agentinfra/core/threads';
import { type ParsedMessage, parseMimeMessage } from './mime-message.js';
import { boundedScoringInput } from './scoring/bounded-input.js';
import type { ScoringInput } from './scoring/injection-scorer.js';
import { createLocalInjectionScorer, type InjectionExplanation, type LocalInjectionScorer } from './scoring/local-scorer.js';

/** One message to parse: its raw bytes (over shared memory, not copied) and the byte limit of its text and HTML bodies. */
export interface MimeParseTask {
  raw: Uint8Array;
  maxBodyBytes: number;
}

/** What the worker answers: the parsed message with the local model's explanation, or why the input is not a readable message. */
export type MimeParseOutcome = { ok: true; message: ParsedMessage; local: InjectionExplanation } | { ok: false; reason: string };

// Parsing a 10 MiB mail takes seconds of CPU: it runs when the event loop does not need the core.
lowerBackgroundThreadPriority();

/** The bundled local model, loaded by the first message this thread scores. */
let scorer: LocalInjectionScorer | undefined;

/**
 * Worker-thread entry of the MIME parser pool (see `createMimeParserPool`):
 * parses one raw message with {@link parseMimeMessage} and explains it with
 * the bundled local injection model, so that neither runs on the event loop
 * (scoring a message with megabytes of text stalled it for tens of
 * milliseconds, bench/worst-case.ts). mailparser's own refusals (a header
 * block over 1 MiB, more than 1,000 MIME parts) come back as `{ ok: false }`,
 * so that the caller can tell bad mail from a broken pool.
 */
export default async function parseInWorker(task: MimeParseTask): Promise<MimeParseOutcome> {
  const { raw, maxBodyBytes } = task;
  let message: ParsedMessage;
  try {
    message = await parseMimeMessage(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), { maxBodyBytes });
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
  scorer ??= createLocalInjectionScorer();
  return {
    ok: true,
    message,
    local: scorer.explain(boundedScoringInput({ subject: message.subject, text: message.text, html: message.html })),
  };
}

/** Worker-thread entry that explains one message (already bounded) with the bundled local injection model. */
export function explainInWorker(input: ScoringInput): InjectionExplanation {
  scorer ??= createLocalInjectionScorer();
  return scorer.explain(input);
}

/** Worker-thread entry that hashes one raw message: its SHA-256 as 64 lower-case hex digits. */
export function digestInWorker(raw: Uint8Array): string {
  return createHash('sha256').update(raw).digest('hex');
}
