import { workerScript } from '@agentinfra/core/threads';
import { Piscina } from 'piscina';
import type { MimeParseOutcome, MimeParseTask } from './mime-parse-worker.js';
import type { ParsedMessage } from './parsed-message.js';
import type { ScoringInput } from './scoring/injection-scorer.js';
import type { InjectionExplanation } from './scoring/local-scorer.js';

/** A message mailparser refuses to read (a header block over 1 MiB, more than 1,000 MIME parts). */
export class MalformedMessageError extends Error {
  override readonly name = 'MalformedMessageError';
}

/** A plain Uint8Array over `raw`'s memory (what the worker receives; shared memory stays shared). */
const bytesOf = (raw: Buffer) => new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);

/** Parses raw messages away from the event loop. */
export interface MimeParserPool {
  /**
   * Parses one raw RFC 5322 message in a worker thread and explains it with
   * the bundled local injection model there (`local`). A `raw` backed by a
   * SharedArrayBuffer (as the SMTP listener's is) reaches the worker without a copy.
   * The text and HTML bodies are cut to `maxBodyBytes` (see `parseMimeMessage`).
   * @throws MalformedMessageError when the message cannot be read; Error when the pool is closed or its queue is full.
   */
  parse(raw: Buffer): Promise<{ message: ParsedMessage; local: InjectionExplanation }>;
  /**
   * The SHA-256 of `raw` as 64 lower-case hex digits, computed in a worker
   * thread (a 10 MiB message takes about 7 ms on an idle core, several times
   * that on a busy one). A `raw` backed by a
   * SharedArrayBuffer reaches the worker without a copy.
   * @throws Error when the pool is closed or its queue is full.
   */
  digest(raw: Buffer): Promise<string>;
  /**
   * Explains `input` with the bundled local injection model in a worker thread
   * (for large /ingest bodies: scoring a megabyte of text takes tens of ms).
   * @throws Error when the pool is closed or its queue is full.
   */
  explain(input: ScoringInput): Promise<InjectionExplanation>;
  /** Stops the worker threads (queued messages are rejected). */
  close(): Promise<void>;
}

/** Options of {@link createMimeParserPool}. */
export interface MimeParserPoolOptions {
  /** Worker threads at most. */
  threads: number;
  /** Messages waiting for a thread at most; more are refused at once (the MTA answers 451, the sender retries). */
  maxQueue: number;
  /** Longest text and HTML body kept per message, in UTF-8 bytes (`postbox.maxBodyBytes`). */
  maxBodyBytes: number;
  /** Told when a thread fails outside a task (it could not start or exited); the pool starts another for the next message. */
  onError?: (error: Error) => void;
}

/**
 * Creates a pool of worker threads (piscina) running mailparser and the local injection model (issue #11):
 * splitting MIME, decoding bodies and turning HTML into text cost up to
 * seconds of CPU for a 10 MiB message (`html-to-text` reads about 3 MB/s), so
 * they never run on the event loop. Threads start with the first message and
 * stop after 30 s without work. Run from TypeScript sources (tests, `tsx`),
 * the workers load the `.ts` worker through tsx.
 */
export function createMimeParserPool(options: MimeParserPoolOptions): MimeParserPool {
  const script = workerScript(import.meta.url, 'mime-parse-worker');
  const pool = new Piscina<MimeParseTask | Uint8Array | ScoringInput, MimeParseOutcome | InjectionExplanation | string>({
    filename: script.filename,
    minThreads: 0,
    maxThreads: options.threads,
    maxQueue: options.maxQueue,
    idleTimeout: 30_000,
    execArgv: script.execArgv,
  });
  // A thread that cannot start or dies outside a task: its tasks are rejected (the MTA answers 451); without a listener the process would crash.
  pool.on('error', (error: unknown) => options.onError?.(error instanceof Error ? error : new Error(String(error))));
  return {
    async parse(raw) {
      const task: MimeParseTask = { raw: bytesOf(raw), maxBodyBytes: options.maxBodyBytes };
      const outcome = (await pool.run(task)) as MimeParseOutcome;
      if (!outcome.ok) throw new MalformedMessageError(outcome.reason);
      return { message: outcome.message, local: outcome.local };
    },
    digest: async (raw) => (await pool.run(bytesOf(raw), { name: 'digestInWorker' })) as string,
    explain: async (input) => (await pool.run(input, { name: 'explainInWorker' })) as InjectionExplanation,
    close: () => pool.destroy(),
  };
}
